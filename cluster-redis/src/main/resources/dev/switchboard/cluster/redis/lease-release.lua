-- Ends a write lease if ARGV[1] still holds it, and marks the conversation's top seq as the point
-- its writer let go cleanly. With no meta hash (nothing published, or it expired) nothing is
-- marked: the next writer must then find the top in the durable store.
-- KEYS[1] write lease, KEYS[2] meta hash; ARGV[1] token
-- Returns 1 when released, 0 when the lease is gone or another token's.
if redis.call('GET', KEYS[1]) ~= ARGV[1] then
  return 0
end
redis.call('DEL', KEYS[1])
local top = redis.call('HGET', KEYS[2], 'seq')
if top then
  redis.call('HSET', KEYS[2], 'released', top)
end
return 1
