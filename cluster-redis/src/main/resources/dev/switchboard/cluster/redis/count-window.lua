-- Counts one more in a fixed window that starts with its first count.
-- KEYS[1] counter; ARGV[1] window in milliseconds
-- Returns the count in the window so far, this one included.
local count = redis.call('INCR', KEYS[1])
if redis.call('PTTL', KEYS[1]) < 0 then
  redis.call('PEXPIRE', KEYS[1], ARGV[1])
end
return count
