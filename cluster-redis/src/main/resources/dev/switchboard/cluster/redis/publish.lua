-- Appends events to a conversation in one step: checks the write lease and that the seqs rise, adds
-- each entry, with the seq before it, to the bounded stream under its seq, records the top seq,
-- refreshes the TTLs and publishes each entry live. Nothing is kept unless all of it is.
-- KEYS[1] meta hash, KEYS[2] stream, KEYS[3] write lease
-- ARGV[1] lease token, ARGV[2] stream MAXLEN, ARGV[3] TTL in seconds, ARGV[4] live channel,
-- ARGV[5], ARGV[6], ...: seq (at least 1), payload of each event, in order
-- Returns 0 published, 1 lease lost, 2 stale (a seq is not above the one before it).
-- Seqs are stored and sent as the decimal text given. Lua compares them as doubles, exact up to 2^53
-- and never taking a lower seq for a higher one above that.
if redis.call('GET', KEYS[3]) ~= ARGV[1] then
  return 1
end
local prev = redis.call('HGET', KEYS[1], 'seq')
if not prev then
  -- A stream without its meta hash is what is left of a lost top; its ids could refuse the seq.
  prev = '0'
  redis.call('DEL', KEYS[2])
end
local last = tonumber(prev)
for i = 5, #ARGV, 2 do
  local seq = tonumber(ARGV[i])
  if seq <= last then
    return 2
  end
  last = seq
end
for i = 5, #ARGV, 2 do
  redis.call('XADD', KEYS[2], 'MAXLEN', ARGV[2], ARGV[i] .. '-0', 'p', prev, 'd', ARGV[i + 1])
  redis.call('PUBLISH', ARGV[4], ARGV[i] .. ':' .. prev .. ':' .. ARGV[i + 1])
  prev = ARGV[i]
end
redis.call('HSET', KEYS[1], 'seq', prev)
redis.call('EXPIRE', KEYS[1], ARGV[3])
redis.call('EXPIRE', KEYS[2], ARGV[3])
return 0
