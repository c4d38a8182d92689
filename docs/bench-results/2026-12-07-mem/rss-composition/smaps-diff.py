import sys, re, collections
def parse(path):
    cats = collections.Counter(); cur=None
    for line in open(path):
        m = re.match(r'^([0-9a-f]+)-([0-9a-f]+) (\S+) \S+ \S+ \S+\s*(.*)$', line)
        if m:
            size = (int(m.group(2),16)-int(m.group(1),16))//1024
            name = m.group(4).strip(); perms=m.group(3)
            if name == '[heap]': cur='heap(main arena)'
            elif name.startswith('/'): cur='file:'+name.split('/')[-1]
            elif name: cur=name
            else:
                # anon: classify by size
                if size in (8192, 8188, 8180, 8184): cur='anon 8MiB (thread stack)'
                elif size >= 60000: cur='anon >=60MiB (arena heap reserve)'
                else: cur='anon %s' % ('small' if size < 1024 else 'mid(%d KiB)' % size)
            continue
        m = re.match(r'^Rss:\s+(\d+) kB', line)
        if m and cur: cats[cur]+=int(m.group(1))
    return cats
a = parse(sys.argv[1]); b = parse(sys.argv[2])
keys = sorted(set(a)|set(b), key=lambda k: -(b[k]-a[k]))
for k in keys:
    if abs(b[k]-a[k]) >= 64 or b[k] >= 1024:
        print(f"{a[k]:8d} -> {b[k]:8d} KiB  (+{b[k]-a[k]})  {k}")
print("total", sum(a.values()), "->", sum(b.values()))
