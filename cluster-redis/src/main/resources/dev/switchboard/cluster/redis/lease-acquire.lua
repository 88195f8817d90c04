-- Makes ARGV[1] the writer of a conversation unless a lease holds it, and says where the
-- conversation's seqs stand. Clears the clean mark: only this writer's release may set it again, so
-- a writer that dies leaves the conversation not clean whatever the one before it did.
-- KEYS[1] write lease, KEYS[2] meta hash; ARGV[1] token, ARGV[2] TTL in milliseconds
-- Returns {} when a lease holds the conversation, else {top seq ('0': none), 1 when the last writer
-- released at the top seq, else 0}.
if not redis.call('SET', KEYS[1], ARGV[1], 'NX', 'PX', ARGV[2]) then
  return {}
end
local meta = redis.call('HMGET', KEYS[2], 'seq', 'released')
if not meta[1] then
  return {'0', 0}
end
if meta[2] then
  redis.call('HDEL', KEYS[2], 'released')
end
return {meta[1], meta[1] == meta[2] and 1 or 0}
