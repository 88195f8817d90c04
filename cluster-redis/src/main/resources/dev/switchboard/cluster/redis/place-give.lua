-- Gives back one of a key's places a node took.
-- KEYS[1] places hash {node: count}; ARGV[1] the node
if redis.call('HINCRBY', KEYS[1], ARGV[1], -1) <= 0 then
  redis.call('HDEL', KEYS[1], ARGV[1])
end
return 1
