-- Reads a conversation's stream from a seq on, with the meta it belongs to, as one snapshot.
-- KEYS[1] meta hash, KEYS[2] stream; ARGV[1] first seq wanted, ARGV[2] most entries
-- Returns {} when not open, else {epoch, top seq, oldest seq held (0: none), seq, payload, ...}.
local meta = redis.call('HMGET', KEYS[1], 'epoch', 'seq')
if not meta[1] then
  return {}
end
local result = {meta[1], tonumber(meta[2]), 0}
local oldest = redis.call('XRANGE', KEYS[2], '-', '+', 'COUNT', 1)
if #oldest > 0 then
  result[3] = tonumber(string.match(oldest[1][1], '^%d+'))
end
for _, entry in ipairs(redis.call('XRANGE', KEYS[2], ARGV[1], '+', 'COUNT', ARGV[2])) do
  result[#result + 1] = tonumber(string.match(entry[1], '^%d+'))
  result[#result + 1] = entry[2][2]
end
return result
