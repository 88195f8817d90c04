-- Ends a write lease if ARGV[1] still holds it, and marks where its writer let go cleanly: the top
-- seq, raised to ARGV[2] when the writer's own top is higher (a writer that took over from one that
-- stopped starts above every seq that one reserved, and the next writer must go on from there).
-- With no meta hash and no top given (nothing published, or it expired) nothing is marked: the
-- next writer must then find the top in the durable store.
-- KEYS[1] write lease, KEYS[2] meta hash; ARGV[1] token, ARGV[2] the writer's top seq (0: none)
-- Returns 1 when released, 0 when the lease is gone or another token's.
if redis.call('GET', KEYS[1]) ~= ARGV[1] then
  return 0
end
redis.call('DEL', KEYS[1])
local top = redis.call('HGET', KEYS[2], 'seq')
if tonumber(ARGV[2]) > tonumber(top or '0') then
  top = ARGV[2]
  redis.call('HSET', KEYS[2], 'seq', top)
end
if top then
  redis.call('HSET', KEYS[2], 'released', top)
end
return 1
