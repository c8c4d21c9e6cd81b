import { classifyAddress, isMetadataHostName, literalAddress, parseAddressList, refusedCategory } from './network-guard';

describe('classifyAddress', () => {
  it.each([
    ['0.0.0.0', 'unspecified'],
    ['0.1.2.3', 'unspecified'],
    ['::', 'unspecified'],
    ['127.0.0.1', 'loopback'],
    ['127.255.255.254', 'loopback'],
    ['::1', 'loopback'],
    ['::ffff:127.0.0.1', 'loopback'],
    ['::ffff:7f00:1', 'loopback'],
    ['64:ff9b::127.0.0.1', 'loopback'],
    ['2002:7f00:1::', 'loopback'],
    ['10.20.30.40', 'private'],
    ['172.16.0.1', 'private'],
    ['172.31.255.255', 'private'],
    ['192.168.0.1', 'private'],
    ['100.64.0.1', 'private'],
    ['198.18.0.1', 'private'],
    ['fc00::1', 'private'],
    ['fd12:3456::1', 'private'],
    ['::ffff:10.0.0.1', 'private'],
    ['169.254.1.1', 'link-local'],
    ['fe80::1', 'link-local'],
    ['fe80::1%eth0', 'link-local'],
    ['169.254.169.254', 'metadata'],
    ['::ffff:169.254.169.254', 'metadata'],
    ['169.254.170.2', 'metadata'],
    ['fd00:ec2::254', 'metadata'],
    ['100.100.100.200', 'metadata'],
    ['192.0.0.192', 'metadata'],
    ['168.63.129.16', 'metadata'],
    ['224.0.0.1', 'multicast'],
    ['ff02::1', 'multicast'],
    ['240.0.0.1', 'reserved'],
    ['255.255.255.255', 'reserved'],
    ['not an address', 'reserved'],
  ])('%s is %s', (address, category) => {
    expect(classifyAddress(address)).toBe(category);
  });

  it.each(['93.184.215.14', '8.8.8.8', '1.1.1.1', '172.32.0.1', '2606:4700:4700::1111', '::ffff:8.8.8.8', '64:ff9b::808:808', '2002:808:808::1'])(
    '%s is public',
    (address) => {
      expect(classifyAddress(address)).toBeUndefined();
    },
  );
});

describe('refusedCategory', () => {
  const { list } = parseAddressList(['10.1.0.0/16', '169.254.169.254', '::1']);

  it('refuses what is not public unless allowed, and metadata unless listed', () => {
    expect(refusedCategory('10.1.2.3', { allowPrivateNetworks: false, allowAddresses: undefined })).toBe('private');
    expect(refusedCategory('10.1.2.3', { allowPrivateNetworks: false, allowAddresses: list })).toBeUndefined();
    expect(refusedCategory('10.2.0.1', { allowPrivateNetworks: false, allowAddresses: list })).toBe('private');
    expect(refusedCategory('10.2.0.1', { allowPrivateNetworks: true, allowAddresses: undefined })).toBeUndefined();
    expect(refusedCategory('169.254.169.254', { allowPrivateNetworks: true, allowAddresses: undefined })).toBe('metadata');
    expect(refusedCategory('169.254.169.254', { allowPrivateNetworks: false, allowAddresses: list })).toBeUndefined();
    expect(refusedCategory('::1', { allowPrivateNetworks: false, allowAddresses: list })).toBeUndefined();
    expect(refusedCategory('8.8.8.8', { allowPrivateNetworks: false, allowAddresses: undefined })).toBeUndefined();
  });
});

describe('parseAddressList, literalAddress, isMetadataHostName', () => {
  it('reads addresses and CIDR ranges and reports what it cannot read', () => {
    const { list, invalid } = parseAddressList(['192.168.0.0/16', '[::1]', 'fd00::/8', '1.2.3.4/33', 'example.com', '10.0.0.0/x', '']);
    expect(invalid).toEqual(['1.2.3.4/33', 'example.com', '10.0.0.0/x', '']);
    expect(list.check('192.168.4.4')).toBe(true);
    expect(list.check('::1', 'ipv6')).toBe(true);
    expect(list.check('fd12::1', 'ipv6')).toBe(true);
    expect(list.check('10.0.0.1')).toBe(false);
  });

  it('tells literal addresses from names', () => {
    expect(literalAddress('127.0.0.1')).toBe('127.0.0.1');
    expect(literalAddress('[::1]')).toBe('::1');
    expect(literalAddress('example.com')).toBeUndefined();
  });

  it('knows the metadata host names, with any case and a trailing dot', () => {
    expect(isMetadataHostName('metadata.google.internal')).toBe(true);
    expect(isMetadataHostName('METADATA.google.internal.')).toBe(true);
    expect(isMetadataHostName('metadata.example.com')).toBe(false);
  });
});
