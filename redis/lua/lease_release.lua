-- Releases the consumer lease KEYS[1] if this daemon (ARGV[1]) holds it.
if redis.call('GET', KEYS[1]) == ARGV[1] then
  redis.call('DEL', KEYS[1])
end
return 0
