-- Renews a node's presence and answers the nodes whose presence lapsed (they stopped).
-- KEYS[1] sorted set of nodes by when their presence lapses; ARGV[1] the node, ARGV[2] TTL in ms
-- Returns the nodes whose presence lapsed within the last day.
local time = redis.call('TIME')
local now = time[1] * 1000 + math.floor(time[2] / 1000)
redis.call('ZADD', KEYS[1], now + tonumber(ARGV[2]), ARGV[1])
-- Nodes gone for a day are forgotten, as are the places they held.
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', now - 86400000)
return redis.call('ZRANGEBYSCORE', KEYS[1], '-inf', '(' .. now)
