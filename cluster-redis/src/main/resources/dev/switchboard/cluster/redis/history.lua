-- Reads a conversation's top seq and its stream after a seq, as one snapshot.
-- KEYS[1] meta hash, KEYS[2] stream; ARGV[1] exclusive start ('(' and a seq), ARGV[2] most entries
-- Returns {top seq ('0': none), then for each entry its id, the seq before it and its payload}.
-- Without the meta hash the stream is not read: a publish would drop what is left of it.
local top = redis.call('HGET', KEYS[1], 'seq')
if not top then
  return {'0'}
end
local result = {top}
for _, entry in ipairs(redis.call('XRANGE', KEYS[2], ARGV[1], '+', 'COUNT', ARGV[2])) do
  result[#result + 1] = entry[1]
  result[#result + 1] = entry[2][2]
  result[#result + 1] = entry[2][4]
end
return result
