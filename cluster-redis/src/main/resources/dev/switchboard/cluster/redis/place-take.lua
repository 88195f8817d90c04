-- Takes one of a key's places for a node, counting the places of every node but those whose
-- presence lapsed (a node that stopped). Their counts stay in the hash, uncounted, until it expires.
-- KEYS[1] places hash {node: count}; ARGV[1] this node, ARGV[2] limit, ARGV[3] hash TTL in ms,
-- ARGV[4..] the nodes whose presence lapsed
-- Returns 1 when taken, 0 when every place is taken.
local gone = {}
for i = 4, #ARGV do
  gone[ARGV[i]] = true
end
local fields = redis.call('HGETALL', KEYS[1])
local taken = 0
for i = 1, #fields, 2 do
  if not gone[fields[i]] then
    taken = taken + tonumber(fields[i + 1])
  end
end
if taken >= tonumber(ARGV[2]) then
  return 0
end
redis.call('HINCRBY', KEYS[1], ARGV[1], 1)
redis.call('PEXPIRE', KEYS[1], ARGV[3])
return 1
