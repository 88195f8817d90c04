-- Whether a lease taken out of the index has lapsed, and if so where its conversation's seqs stand.
-- KEYS[1] write lease, KEYS[2] meta hash; ARGV[1] token
-- Returns {milliseconds left} while ARGV[1] still holds the lease, else {-1, top seq ('0': none),
-- 1 when the last writer released at the top seq, else 0}.
if redis.call('GET', KEYS[1]) == ARGV[1] then
  local left = redis.call('PTTL', KEYS[1])
  if left >= 0 then
    return {left}
  end
end
local meta = redis.call('HMGET', KEYS[2], 'seq', 'released')
return {-1, meta[1] or '0', meta[1] and meta[1] == meta[2] and 1 or 0}
