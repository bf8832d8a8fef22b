// LD_PRELOAD shim for bench/gcs_bench.sh: sets TCP_NODELAY on every socket the process accepts.
// The fake GCS serves with cpp-httplib, whose servers leave Nagle on (CPPHTTPLIB_TCP_NODELAY is
// false in Debian's compiled library). Nagle on the server plus delayed ACKs on the client make
// every small response wait ~40 ms for an ACK, which would swamp the clients being compared.
// It also raises the listen backlog (cpp-httplib's is 5): 8 clients connecting at once overflow
// it, and the dropped SYNs are retransmitted after 1 s.
#define _GNU_SOURCE
#include <dlfcn.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/socket.h>

static void nodelay(int fd) {
  if (fd >= 0) {
    int one = 1;
    setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);  // fails harmlessly on non-TCP
  }
}

int accept(int fd, struct sockaddr* addr, socklen_t* len) {
  static int (*real)(int, struct sockaddr*, socklen_t*);
  if (!real) real = (int (*)(int, struct sockaddr*, socklen_t*))dlsym(RTLD_NEXT, "accept");
  int c = real(fd, addr, len);
  nodelay(c);
  return c;
}

int accept4(int fd, struct sockaddr* addr, socklen_t* len, int flags) {
  static int (*real)(int, struct sockaddr*, socklen_t*, int);
  if (!real) real = (int (*)(int, struct sockaddr*, socklen_t*, int))dlsym(RTLD_NEXT, "accept4");
  int c = real(fd, addr, len, flags);
  nodelay(c);
  return c;
}

int listen(int fd, int backlog) {
  static int (*real)(int, int);
  if (!real) real = (int (*)(int, int))dlsym(RTLD_NEXT, "listen");
  return real(fd, backlog < 128 ? 128 : backlog);
}
