-- Makes ARGV[1] the writer of a conversation unless a lease holds it, and says where the
-- conversation's seqs stand. Clears the clean mark: only this writer's release may set it again, so
-- a writer that dies leaves the conversation not clean whatever the one before it did. An
-- acquisition that is not clean raises the conversation's fence by one: the writer before may still
-- be writing the durable store, and the store leaves out what it writes under the lower fence.
-- KEYS[1] write lease, KEYS[2] meta hash; ARGV[1] token, ARGV[2] TTL in milliseconds, ARGV[3] the
-- meta hash's TTL in seconds (when this creates it); ARGV[4], for a reaper taking over a lease it
-- claimed from the index, that lease's token
-- Returns {} when a lease holds the conversation ({milliseconds left} when it is still ARGV[4]'s),
-- else {top seq ('0': none), 1 when the last writer released at the top seq, else 0, the fence}.
if not redis.call('SET', KEYS[1], ARGV[1], 'NX', 'PX', ARGV[2]) then
  if ARGV[4] and redis.call('GET', KEYS[1]) == ARGV[4] then
    return {redis.call('PTTL', KEYS[1])}
  end
  return {}
end
local meta = redis.call('HMGET', KEYS[2], 'seq', 'released', 'fence')
if meta[2] then
  redis.call('HDEL', KEYS[2], 'released')
end
if meta[1] and meta[1] == meta[2] then
  return {meta[1], 1, tonumber(meta[3] or '0')}
end
local fence = redis.call('HINCRBY', KEYS[2], 'fence', 1)
if not meta[1] then
  redis.call('EXPIRE', KEYS[2], ARGV[3])
end
return {meta[1] or '0', 0, fence}
