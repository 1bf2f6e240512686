-- Records task ARGV[1]'s new config version ARGV[2] in <p>:taskversions
-- (KEYS[1]) and, in the same step, marks its rescore as begun in
-- <p>:rescore:pending (KEYS[2]), which only a finished rescore clears.
redis.call('HSET', KEYS[1], ARGV[1], ARGV[2])
redis.call('HSET', KEYS[2], ARGV[1], ARGV[2])
return 0
