-- Takes out of the lease index the members whose time has passed, so that one reaper alone gets
-- each of them.
-- KEYS[1] lease index (sorted set); ARGV[1] most members
-- Returns the index's time now in milliseconds, then each member taken and when it was due.
local time = redis.call('TIME')
local now = time[1] * 1000 + math.floor(time[2] / 1000)
local due = redis.call('ZRANGEBYSCORE', KEYS[1], '-inf', now, 'WITHSCORES', 'LIMIT', 0, ARGV[1])
local reply = {now}
local members = {}
for i = 1, #due, 2 do
  members[#members + 1] = due[i]
  reply[#reply + 1] = due[i]
  reply[#reply + 1] = due[i + 1]
end
if #members > 0 then
  redis.call('ZREM', KEYS[1], unpack(members))
end
return reply
