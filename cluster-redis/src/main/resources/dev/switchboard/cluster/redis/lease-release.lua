-- Deletes a run lease if ARGV[1] still holds it.
-- KEYS[1] run lease; ARGV[1] token
-- Returns 1 when released, 0 when the lease is gone or another token's.
if redis.call('GET', KEYS[1]) == ARGV[1] then
  return redis.call('DEL', KEYS[1])
end
return 0
