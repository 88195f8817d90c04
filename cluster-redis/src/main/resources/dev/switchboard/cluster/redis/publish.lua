-- Appends one event to a conversation in one step: checks the write lease and that the seq rises,
-- adds the entry, with the seq before it, to the bounded stream under its seq, records the top seq,
-- refreshes the TTLs and publishes the entry live.
-- KEYS[1] meta hash, KEYS[2] stream, KEYS[3] write lease
-- ARGV[1] lease token, ARGV[2] seq (at least 1), ARGV[3] payload, ARGV[4] stream MAXLEN,
-- ARGV[5] TTL in seconds, ARGV[6] live channel
-- Returns 0 published, 1 lease lost, 2 stale (the seq is not above the top).
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
if tonumber(ARGV[2]) <= tonumber(prev) then
  return 2
end
redis.call('XADD', KEYS[2], 'MAXLEN', ARGV[4], ARGV[2] .. '-0', 'p', prev, 'd', ARGV[3])
redis.call('HSET', KEYS[1], 'seq', ARGV[2])
redis.call('EXPIRE', KEYS[1], ARGV[5])
redis.call('EXPIRE', KEYS[2], ARGV[5])
redis.call('PUBLISH', ARGV[6], ARGV[2] .. ':' .. prev .. ':' .. ARGV[3])
return 0
