import { createHash } from 'node:crypto';

/** A Lua script and its SHA-1, for EVALSHA (EVAL once the server has forgotten it, e.g. after a restart). */
export interface RedisScript {
  readonly source: string;
  readonly sha: string;
}

function script(source: string): RedisScript {
  return { source, sha: createHash('sha1').update(source).digest('hex') };
}

// Every script reads the time from the server (TIME), so that the expiry
// scores of the index do not depend on the clocks of the hosts.
const NOW_MS = `local now = redis.call('TIME')
local nowMs = tonumber(now[1]) * 1000 + math.floor(tonumber(now[2]) / 1000)`;

// Whose a record is, without decoding it: the JSON the registry writes holds
// `"registration":"<id>"` once, as a key (a string value cannot hold that
// sequence unescaped). A plain substring search costs far less than
// cjson.decode on every heartbeat.
const OWNERSHIP = `local function holds(record, registration)
  return string.find(record, '"registration":"' .. registration .. '"', 1, true) ~= nil
end
local function registered(record)
  return string.find(record, '"registration":"', 1, true) ~= nil
end`;

/**
 * Writes a plan's record with its TTL and its place in the index.
 * KEYS: record, pending, index. ARGV: record JSON, ttl ms, registration id, plan id, mode.
 * Modes: `new` (refuses a record of another registration: returns
 * {'duplicate', record}; drops what was queued for an earlier registration
 * of the id, which a crashed process left behind), `refresh` (a heartbeat: refuses a record of another
 * registration with {'taken'}), `resync` (after a reconnection: as refresh,
 * and returns the messages queued for this registration).
 */
export const REGISTER_SCRIPT = script(`${OWNERSHIP}
local existing = redis.call('GET', KEYS[1])
if existing and registered(existing) and not holds(existing, ARGV[3]) then
  if ARGV[5] == 'new' then return {'duplicate', existing} end
  return {'taken'}
end
redis.call('SET', KEYS[1], ARGV[1], 'PX', ARGV[2])
${NOW_MS}
redis.call('ZADD', KEYS[3], nowMs + tonumber(ARGV[2]), ARGV[4])
if ARGV[5] == 'new' then
  redis.call('DEL', KEYS[2])
  return {'ok'}
end
if ARGV[5] == 'refresh' then return {'ok'} end
local queued = redis.call('HGETALL', KEYS[2])
local reply = {'ok'}
local prefix = ARGV[3] .. ' '
for index = 1, #queued, 2 do
  if string.sub(queued[index], 1, #prefix) == prefix then reply[#reply + 1] = queued[index + 1] end
end
return reply`);

/**
 * Sends a message to a plan: queues it under the plan's registration (so a
 * process that is not connected gets it when it is back) and publishes it on
 * the channel of the process that runs the plan.
 * KEYS: record, pending. ARGV: message JSON, message key, pending ttl ms, channel prefix.
 * Returns {receivers} (how many connections got it), or {-1} when no plan has the id.
 */
export const SEND_SCRIPT = script(`local record = redis.call('GET', KEYS[1])
if not record then return {-1} end
local ok, decoded = pcall(cjson.decode, record)
if not ok or type(decoded) ~= 'table' or type(decoded['registration']) ~= 'string' or type(decoded['instance']) ~= 'string' then return {-1} end
redis.call('HSET', KEYS[2], decoded['registration'] .. ' ' .. ARGV[2], ARGV[1])
redis.call('PEXPIRE', KEYS[2], ARGV[3])
return {redis.call('PUBLISH', ARGV[4] .. decoded['instance'], ARGV[1])}`);

/**
 * Withdraws a plan: its record, its queued messages, its place in the index —
 * unless the record is another registration's.
 * KEYS: record, pending, index. ARGV: registration id, plan id.
 */
export const END_SCRIPT = script(`${OWNERSHIP}
local existing = redis.call('GET', KEYS[1])
if existing and registered(existing) and not holds(existing, ARGV[1]) then return 0 end
redis.call('DEL', KEYS[1], KEYS[2])
redis.call('ZREM', KEYS[3], ARGV[2])
return 1`);

/** Drops index entries whose plans have expired; returns how many remain. KEYS: index. */
export const PRUNE_SCRIPT = script(`${NOW_MS}
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', nowMs)
return redis.call('ZCARD', KEYS[1])`);
