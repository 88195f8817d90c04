-- How long a run lease has left if ARGV[1] still holds it.
-- KEYS[1] run lease; ARGV[1] token
-- Returns the milliseconds left, or -1 when the lease is gone or another token's.
if redis.call('GET', KEYS[1]) == ARGV[1] then
  return redis.call('PTTL', KEYS[1])
end
return -1
