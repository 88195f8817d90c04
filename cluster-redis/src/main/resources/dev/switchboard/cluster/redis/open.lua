-- Opens a conversation's live history. A meta hash that exists is kept; a missing one (a new
-- conversation, an expired one, or a Redis that lost its data) starts a new epoch whose seqs go on
-- after ARGV[2], the durable store's top, and drops any stream left from the lost epoch, whose ids
-- would otherwise refuse the new seqs.
-- KEYS[1] meta hash, KEYS[2] stream; ARGV[1] new epoch, ARGV[2] floor seq, ARGV[3] TTL in seconds
-- Returns {epoch, top seq}.
local meta = redis.call('HMGET', KEYS[1], 'epoch', 'seq')
if not meta[1] then
  redis.call('DEL', KEYS[2])
  redis.call('HSET', KEYS[1], 'epoch', ARGV[1], 'seq', ARGV[2])
  meta = {ARGV[1], ARGV[2]}
end
redis.call('EXPIRE', KEYS[1], ARGV[3])
redis.call('EXPIRE', KEYS[2], ARGV[3])
return {meta[1], tonumber(meta[2])}
