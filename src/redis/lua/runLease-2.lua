--[[
  One operation on a lease, guarded by the Redis incarnation that holds it.

  A Redis that restarted (empty, or from an AOF that lost its last second) or a replica promoted in a
  failover may have forgotten a lease, or kept an older expiry of it. The first script to run after such
  a change records the server's new run_id with the time it saw it; until the incarnation is older than
  ARGV[4] (the lease TTL plus a margin), nobody may treat a missing lease as expired: its holder may still
  act on it, and may re-assert it. Redlock's "delayed restart", enforced here instead of by operators.

  Input:
    KEYS[1]  the lease            (sb:lease:{leases}:<resource>), value: the holder's token
    KEYS[2]  the incarnation seen (sb:incarnation:{leases}), value: "<run_id>:<ms first seen>"; every lease
             operation of every node touches it, and it lives an hour past the last one
    ARGV[1]  operation: acquire | renew | state | release
    ARGV[2]  the token
    ARGV[3]  TTL in milliseconds (acquire, renew)
    ARGV[4]  the age in milliseconds an incarnation must reach before a missing lease counts as expired

  Output: { code, ms, run_id }
    acquire:  1 taken | 0 held by someone | -2 too young (ms: wait this long)
    renew:    1 extended | 2 re-asserted (missing in a young incarnation) | 0 expired | -1 held by another
    state:    1 held by the token (ms: its PTTL) | 0 not held, surely expired | -2 unknown yet (ms: wait)
    release:  1 deleted | 0 not held by the token
]]
local op, token, ttl, min_age = ARGV[1], ARGV[2], ARGV[3], tonumber(ARGV[4])

local run = string.match(redis.call("INFO", "server"), "run_id:(%w+)")
local t = redis.call("TIME")
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local age = 0
local seen = redis.call("GET", KEYS[2])
local sep = seen and string.find(seen, ":", 1, true)
if sep and string.sub(seen, 1, sep - 1) == run then
  age = now - tonumber(string.sub(seen, sep + 1))
  redis.call("PEXPIRE", KEYS[2], 3600000)
else
  redis.call("SET", KEYS[2], run .. ":" .. now, "PX", 3600000)
end
local young = age < min_age

local held = redis.call("GET", KEYS[1])
if op == "acquire" then
  if held then return { 0, 0, run } end
  if young then return { -2, min_age - age, run } end
  redis.call("SET", KEYS[1], token, "PX", ttl)
  return { 1, 0, run }
elseif op == "renew" then
  if held == token then
    redis.call("PEXPIRE", KEYS[1], ttl)
    return { 1, 0, run }
  end
  if held then return { -1, 0, run } end
  if young then
    redis.call("SET", KEYS[1], token, "PX", ttl)
    return { 2, 0, run }
  end
  return { 0, 0, run }
elseif op == "state" then
  if held == token then return { 1, redis.call("PTTL", KEYS[1]), run } end
  if young then return { -2, min_age - age, run } end
  return { 0, 0, run }
elseif op == "release" then
  if held == token then
    redis.call("DEL", KEYS[1])
    return { 1, 0, run }
  end
  return { 0, 0, run }
end
return redis.error_reply("unknown lease operation " .. tostring(op))
