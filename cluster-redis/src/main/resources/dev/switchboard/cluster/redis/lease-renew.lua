-- Extends a write lease if ARGV[1] still holds it.
-- KEYS[1] write lease; ARGV[1] token, ARGV[2] TTL in milliseconds
-- Returns 1 when renewed, 0 when the lease is gone or another token's.
if redis.call('GET', KEYS[1]) == ARGV[1] then
  return redis.call('PEXPIRE', KEYS[1], ARGV[2])
end
return 0
