#!/usr/bin/python3
# Client for HPE's original librarian (tm-librarian, Python), for the side-by-side
# figures of bench/librarian/orig.sh (docs/bench-librarian.md). Its protocol: a
# JSON object per request over TCP, {"command", "context", args...}; replies are
# JSON objects {"value", "context"} or {"errmsg", "errno"}, back to back.
#   orig-client.py PORT cycle SECONDS BOOKS   create + grow + teardown cycles/s
#   orig-client.py PORT list SHELVES REPEAT   list of SHELVES shelves, p50
# A cycle is what the original's FUSE client (lfs_fuse.py) sends for
# create, truncate to BOOKS books, release, unlink: create_shelf,
# get_shelf + resize_shelf, close_shelf, get_shelf + destroy_shelf.
import json
import socket
import sys
import time

BOOK = 8 << 30


class Conn:
    def __init__(self, port):
        self.s = socket.create_connection(('127.0.0.1', port))
        self.s.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        self.ctx = {'node_id': 1, 'physloc': '1:1:1', 'pid': 1, 'uid': 0, 'gid': 0,
                    'tid': 1, 'seq': 0}
        self.buf = ''
        self.dec = json.JSONDecoder(strict=False)

    def call(self, command, **args):
        self.ctx['seq'] += 1
        req = {'command': command, 'context': self.ctx}
        req.update(args)
        self.s.sendall(json.dumps(req).encode())
        while True:
            try:
                obj, end = self.dec.raw_decode(self.buf)
                self.last = self.buf[:end]
                self.buf = self.buf[end:].lstrip()
                break
            except ValueError:
                data = self.s.recv(1 << 20)
                if not data:
                    raise SystemExit('orig-client: connection closed')
                self.buf += data.decode()
        if obj.get('errmsg'):
            raise SystemExit('orig-client: %s: %s' % (command, obj['errmsg']))
        return obj.get('value')


def cycle(port, secs, books):
    c = Conn(port)
    n = 0
    start = time.monotonic()
    end = start + secs
    while time.monotonic() < end:
        path = '/bench-%d' % n
        sh = c.call('create_shelf', path=path, mode=0o100600)
        got = c.call('get_shelf', path=path)
        c.call('resize_shelf', path=path, id=got['id'], size_bytes=books * BOOK,
               zero_enabled=False)
        c.call('close_shelf', id=sh['id'], open_handle=sh['open_handle'])
        c.call('get_shelf', path=path)
        c.call('destroy_shelf', path=path)
        n += 1
    took = time.monotonic() - start
    print('original: clients 1  books/shelf %d  cycles %d in %.2f s  = %.2f cycles/s'
          % (books, n, took, n / took))


def listing(port, shelves, repeat):
    c = Conn(port)
    for i in range(shelves):
        path = '/bench-list-%05d' % i
        sh = c.call('create_shelf', path=path, mode=0o100600)
        c.call('close_shelf', id=sh['id'], open_handle=sh['open_handle'])
    t = []
    for _ in range(repeat):
        t0 = time.monotonic()
        got = c.call('list_shelves', path='/')
        t.append(time.monotonic() - t0)
    t.sort()
    n = sum(1 for sh in got if sh.get('name', '').startswith('bench-list-'))
    print('original: list of %d shelves: median %.2f ms, p99 %.2f ms (%d runs, %d entries)'
          % (n, t[repeat // 2] * 1000, t[repeat * 99 // 100] * 1000, repeat, len(got)))
    p = []
    for _ in range(11):
        t0 = time.monotonic()
        c.dec.raw_decode(c.last)
        p.append(time.monotonic() - t0)
    p.sort()
    print("  of which the client's JSON parse of the %d-byte reply: median %.2f ms"
          % (len(c.last), p[5] * 1000))


if __name__ == '__main__':
    if len(sys.argv) == 5 and sys.argv[2] == 'cycle':
        cycle(int(sys.argv[1]), float(sys.argv[3]), int(sys.argv[4]))
    elif len(sys.argv) == 5 and sys.argv[2] == 'list':
        listing(int(sys.argv[1]), int(sys.argv[3]), int(sys.argv[4]))
    else:
        raise SystemExit(__doc__ if __doc__ else 'usage: orig-client.py PORT cycle|list A B')
