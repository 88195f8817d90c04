-- Takes out of the lease index the members whose time has passed, so that one reaper alone gets
-- each of them.
-- KEYS[1] lease index (sorted set); ARGV[1] most members
-- Returns the members taken.
local time = redis.call('TIME')
local now = time[1] * 1000 + math.floor(time[2] / 1000)
local due = redis.call('ZRANGEBYSCORE', KEYS[1], '-inf', now, 'LIMIT', 0, ARGV[1])
if #due > 0 then
  redis.call('ZREM', KEYS[1], unpack(due))
end
return due
