-- Raises a conversation's fence to ARGV[2] while ARGV[1] holds its write lease: the node that took
-- it over found a higher fence in the durable store (the bus lost its own), and the writers after
-- it must write under that one.
-- KEYS[1] write lease, KEYS[2] meta hash; ARGV[1] token, ARGV[2] fence
-- Returns 1 when the fence is at least ARGV[2] now, 0 when the lease is gone or another token's.
if redis.call('GET', KEYS[1]) ~= ARGV[1] then
  return 0
end
if tonumber(ARGV[2]) > tonumber(redis.call('HGET', KEYS[2], 'fence') or '0') then
  redis.call('HSET', KEYS[2], 'fence', ARGV[2])
end
return 1
