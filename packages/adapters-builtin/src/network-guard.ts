import { CaError } from '@ca/domain';
import { lookup as dnsLookup } from 'node:dns/promises';
import { BlockList, isIP, type LookupFunction } from 'node:net';

/** Why an address is not public: what the HTTP tools refuse unless a setting allows it. */
export type AddressCategory = 'unspecified' | 'loopback' | 'private' | 'link-local' | 'metadata' | 'multicast' | 'reserved';

/** One address a host name resolves to. */
export interface ResolvedAddress {
  readonly address: string;
  /** 4 or 6. */
  readonly family: number;
}

/** Resolves a host name to every address it has (the HTTP tools' `lookup` setting). */
export type HostResolver = (hostname: string) => Promise<readonly ResolvedAddress[]>;

/** What the HTTP tools may connect to besides public addresses. */
export interface NetworkAddressPolicy {
  /** Loopback, private, link-local, unspecified, multicast and reserved addresses are allowed (cloud metadata is not). */
  readonly allowPrivateNetworks: boolean;
  /** Addresses and ranges allowed whatever they are, metadata included; `undefined` when none. */
  readonly allowAddresses: BlockList | undefined;
}

const DESCRIPTIONS: Readonly<Record<AddressCategory, string>> = {
  unspecified: 'an unspecified address (it reaches this machine)',
  loopback: 'a loopback address (this machine)',
  private: 'a private network address',
  'link-local': 'a link-local address',
  metadata: 'a cloud metadata service',
  multicast: 'a multicast address',
  reserved: 'a reserved address',
};

/** How a refusal names the address's category: `a loopback address (this machine)`. */
export function describeCategory(category: AddressCategory): string {
  return DESCRIPTIONS[category];
}

// Cloud metadata services, refused even where private networks are allowed:
// AWS, GCP, Azure, OpenStack, DigitalOcean… (169.254.169.254), AWS over IPv6
// (fd00:ec2::254), AWS ECS task metadata (169.254.170.2), Alibaba Cloud
// (100.100.100.200), Oracle Cloud (192.0.0.192), Azure's platform endpoint (168.63.129.16).
const METADATA = new BlockList();
for (const address of ['169.254.169.254', '169.254.170.2', '100.100.100.200', '192.0.0.192', '168.63.129.16']) METADATA.addAddress(address, 'ipv4');
METADATA.addAddress('fd00:ec2::254', 'ipv6');

/** Host names of metadata services, refused before they are resolved. */
const METADATA_HOST_NAMES = new Set([
  'metadata.google.internal',
  'metadata.goog',
  'metadata',
  'instance-data',
  'instance-data.ec2.internal',
  'metadata.azure.internal',
]);

function ranges(entries: readonly [string, number, 'ipv4' | 'ipv6'][]): BlockList {
  const list = new BlockList();
  for (const [network, prefix, type] of entries) list.addSubnet(network, prefix, type);
  return list;
}

// Checked in this order; the first that holds names the category.
const CATEGORIES: readonly [AddressCategory, BlockList][] = [
  [
    'unspecified',
    ranges([
      ['0.0.0.0', 8, 'ipv4'],
      ['::', 128, 'ipv6'],
    ]),
  ],
  [
    'loopback',
    ranges([
      ['127.0.0.0', 8, 'ipv4'],
      ['::1', 128, 'ipv6'],
    ]),
  ],
  [
    'link-local',
    ranges([
      ['169.254.0.0', 16, 'ipv4'],
      ['fe80::', 10, 'ipv6'],
    ]),
  ],
  [
    'private',
    ranges([
      ['10.0.0.0', 8, 'ipv4'],
      ['172.16.0.0', 12, 'ipv4'],
      ['192.168.0.0', 16, 'ipv4'],
      ['100.64.0.0', 10, 'ipv4'], // shared address space (carrier-grade NAT)
      ['192.0.0.0', 24, 'ipv4'], // IETF protocol assignments
      ['198.18.0.0', 15, 'ipv4'], // benchmarking
      ['fc00::', 7, 'ipv6'], // unique local
      ['fec0::', 10, 'ipv6'], // site-local (deprecated, still routed by some)
    ]),
  ],
  [
    'multicast',
    ranges([
      ['224.0.0.0', 4, 'ipv4'],
      ['ff00::', 8, 'ipv6'],
    ]),
  ],
  [
    'reserved',
    ranges([
      ['240.0.0.0', 4, 'ipv4'],
      ['100::', 64, 'ipv6'],
    ]),
  ],
];

/**
 * The category of an IP address that is not public, or `undefined` for a
 * public one. IPv4 inside IPv6 (mapped `::ffff:a.b.c.d`, compatible `::a.b.c.d`,
 * NAT64 `64:ff9b::/96`, 6to4 `2002::/16`) is judged by its IPv4 address. A
 * text that is not an IP address counts as `'reserved'` (fail closed).
 */
export function classifyAddress(address: string): AddressCategory | undefined {
  const bare = stripZone(address);
  const family = isIP(bare);
  if (family === 0) return 'reserved';
  const type = family === 4 ? 'ipv4' : 'ipv6';
  if (METADATA.check(bare, type)) return 'metadata';
  if (family === 6) {
    const embedded = embeddedIpv4(bare);
    if (embedded !== undefined) return classifyAddress(embedded);
  }
  for (const [category, list] of CATEGORIES) if (list.check(bare, type)) return category;
  return undefined;
}

/**
 * Why `address` may not be reached under `policy`, or `undefined` when it may:
 * a public address always; a listed one (`allowAddresses`) always; any other
 * but metadata when `allowPrivateNetworks` is set.
 */
export function refusedCategory(address: string, policy: NetworkAddressPolicy): AddressCategory | undefined {
  const category = classifyAddress(address);
  if (category === undefined) return undefined;
  const bare = stripZone(address);
  if (policy.allowAddresses !== undefined && isIP(bare) !== 0 && policy.allowAddresses.check(bare, isIP(bare) === 4 ? 'ipv4' : 'ipv6')) return undefined;
  if (policy.allowPrivateNetworks && category !== 'metadata') return undefined;
  return category;
}

/** Whether a host name is one of the well-known names of a metadata service (`metadata.google.internal`…). */
export function isMetadataHostName(hostname: string): boolean {
  return METADATA_HOST_NAMES.has(hostname.toLowerCase().replace(/\.+$/, ''));
}

/**
 * The IP address a URL host names (brackets of IPv6 removed), or `undefined`
 * for a host name. The WHATWG URL parser has already turned `2130706433`,
 * `0x7f.1` and `127.1` into `127.0.0.1`.
 */
export function literalAddress(hostname: string): string | undefined {
  const bare = hostname.startsWith('[') && hostname.endsWith(']') ? hostname.slice(1, -1) : hostname;
  return isIP(bare) === 0 ? undefined : bare;
}

/**
 * Parses `allowAddresses` entries — `10.0.0.5`, `10.1.0.0/16`, `::1`,
 * `fd12:3456::/32` — into a list; returns the entries it could not read.
 */
export function parseAddressList(entries: readonly string[]): { readonly list: BlockList; readonly invalid: readonly string[] } {
  const list = new BlockList();
  const invalid: string[] = [];
  for (const entry of entries) {
    const match = /^([^/]+)(?:\/(\d{1,3}))?$/.exec(entry.trim());
    const address = match?.[1] === undefined ? '' : match[1].replace(/^\[(.*)\]$/, '$1');
    const family = isIP(address);
    const prefix = match?.[2] === undefined ? undefined : Number(match[2]);
    if (family === 0 || (prefix !== undefined && prefix > (family === 4 ? 32 : 128))) {
      invalid.push(entry);
      continue;
    }
    const type = family === 4 ? 'ipv4' : 'ipv6';
    if (prefix === undefined) list.addAddress(address, type);
    else list.addSubnet(address, prefix, type);
  }
  return { list, invalid };
}

/** The system resolver: every address of the name, in the order the system gives. */
export const systemResolver: HostResolver = (hostname) => dnsLookup(hostname, { all: true, verbatim: true });

/** A host name resolved to an address the policy refuses; carried as the `cause` of the failed connection. */
export class AddressRefusedError extends CaError {
  declare readonly code: 'BUILTIN_HTTP_ADDRESS_NOT_ALLOWED';

  constructor(
    readonly hostname: string,
    readonly address: string,
    readonly category: AddressCategory,
  ) {
    super('BUILTIN_HTTP_ADDRESS_NOT_ALLOWED', `"${hostname}" resolves to ${address}, ${describeCategory(category)}`);
  }

  /** The refusal somewhere in the `cause` chain of a failed request, if there is one. */
  static find(error: unknown): AddressRefusedError | undefined {
    let current: unknown = error;
    for (let depth = 0; depth < 8 && typeof current === 'object' && current !== null; depth++) {
      if (AddressRefusedError.isInstance(current)) return current;
      current = (current as { cause?: unknown }).cause;
    }
    return undefined;
  }
}

/**
 * A `lookup` for `net.connect` (undici's `connect.lookup`) that resolves the
 * name once, checks every address it has, and hands the socket exactly the
 * addresses it checked, so that a second answer of the DNS (rebinding) cannot
 * change where the connection goes. One refused address refuses the name: a
 * name that points partly into a private network is not trusted with the rest.
 */
export function createGuardedLookup(policy: NetworkAddressPolicy, resolve: HostResolver): LookupFunction {
  return (hostname, options, callback) => {
    const answer = callback as (error: Error | null, address?: string | ResolvedAddress[], family?: number) => void;
    let resolving: Promise<readonly ResolvedAddress[]>;
    try {
      resolving = Promise.resolve(resolve(hostname));
    } catch (error) {
      resolving = Promise.reject(error);
    }
    resolving.then(
      (resolved) => {
        const wanted = options.family === 4 || options.family === 6 ? options.family : undefined;
        const addresses = (Array.isArray(resolved) ? resolved : [])
          .filter((entry): entry is ResolvedAddress => typeof entry?.address === 'string' && (entry.family === 4 || entry.family === 6))
          .filter((entry) => wanted === undefined || entry.family === wanted)
          .map((entry) => ({ address: entry.address, family: entry.family }));
        const [first] = addresses;
        if (first === undefined) {
          answer(Object.assign(new Error(`getaddrinfo ENOTFOUND ${hostname}`), { code: 'ENOTFOUND', hostname }));
          return;
        }
        for (const entry of addresses) {
          const category = refusedCategory(entry.address, policy);
          if (category !== undefined) {
            answer(new AddressRefusedError(hostname, entry.address, category));
            return;
          }
        }
        if (options.all === true) answer(null, addresses);
        else answer(null, first.address, first.family);
      },
      (error: unknown) => answer(error instanceof Error ? error : new Error(String(error))),
    );
  };
}

function stripZone(address: string): string {
  const percent = address.indexOf('%');
  return percent === -1 ? address : address.slice(0, percent);
}

/** The IPv4 address carried inside an IPv6 one (mapped, compatible, NAT64, 6to4), if any. */
function embeddedIpv4(address: string): string | undefined {
  const groups = ipv6Groups(address);
  if (groups === undefined) return undefined;
  const [g0, g1, g2, g3, g4, g5, g6, g7] = groups;
  const quad = (high: number, low: number): string => `${high >> 8}.${high & 0xff}.${low >> 8}.${low & 0xff}`;
  const zeroPrefix = g0 === 0 && g1 === 0 && g2 === 0 && g3 === 0 && g4 === 0;
  // ::ffff:a.b.c.d (mapped) and ::a.b.c.d (compatible, but not :: or ::1).
  if (zeroPrefix && (g5 === 0xffff || (g5 === 0 && (g6 !== 0 || g7 > 1)))) return quad(g6, g7);
  // 64:ff9b::a.b.c.d (NAT64, well-known prefix).
  if (g0 === 0x64 && g1 === 0xff9b && g2 === 0 && g3 === 0 && g4 === 0 && g5 === 0) return quad(g6, g7);
  // 2002:AABB:CCDD::/48 (6to4).
  if (g0 === 0x2002) return quad(g1, g2);
  return undefined;
}

/** The eight 16-bit groups of a valid IPv6 address (with `::` and a trailing dotted quad expanded). */
function ipv6Groups(address: string): [number, number, number, number, number, number, number, number] | undefined {
  let text = address.toLowerCase();
  const dotted = /(\d{1,3})\.(\d{1,3})\.(\d{1,3})\.(\d{1,3})$/.exec(text);
  if (dotted !== null) {
    const [a, b, c, d] = dotted.slice(1).map(Number);
    text = `${text.slice(0, dotted.index)}${(((a ?? 0) << 8) | (b ?? 0)).toString(16)}:${(((c ?? 0) << 8) | (d ?? 0)).toString(16)}`;
  }
  const [before, after, ...rest] = text.split('::');
  if (before === undefined || rest.length > 0) return undefined;
  const parse = (part: string): number[] => (part === '' ? [] : part.split(':').map((group) => parseInt(group, 16)));
  const head = parse(before);
  const tail = after === undefined ? [] : parse(after);
  const missing = 8 - head.length - tail.length;
  if (missing < 0 || (after === undefined && missing !== 0)) return undefined;
  const groups = [...head, ...new Array<number>(missing).fill(0), ...tail];
  if (!groups.every((group) => Number.isInteger(group) && group >= 0 && group <= 0xffff)) return undefined;
  const [g0 = 0, g1 = 0, g2 = 0, g3 = 0, g4 = 0, g5 = 0, g6 = 0, g7 = 0] = groups;
  return [g0, g1, g2, g3, g4, g5, g6, g7];
}
