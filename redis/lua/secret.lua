-- The secret participant tokens are keyed with (KEYS[1] = <p>:secret):
-- the first ever set is kept, ARGV[1] (a fresh one in hex) only when
-- there is none (a first start, or a revocation that deleted it). Returns
-- the one in force.
redis.call('SET', KEYS[1], ARGV[1], 'NX')
return redis.call('GET', KEYS[1])
