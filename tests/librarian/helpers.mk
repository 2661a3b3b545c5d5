# The librarian's test clients (tests/librarian/*.t run them): lib-raw sends
# raw frames, lib-stress drives concurrent writers, lib-attack opens idle,
# half-open and flooding connections and times a node's heartbeats, lib-bench
# is the benchmark's client, lib-json holds the reply parser to jansson. Sanitized, with the client library's sources
# compiled in; bench/librarian builds its own optimised lib-bench and
# lib-attack (bench/librarian/Makefile).
LIBRARIAN_TOP := $(TOP)/librarian
LIBRARIAN_CLIENT_DIR := $(LIBRARIAN_TOP)/client
LIBRARIAN_CLIENT := $(wildcard $(LIBRARIAN_CLIENT_DIR)/*.c)
LIBRARIAN_HELPERS := $(B)/lib-raw $(B)/lib-stress $(B)/lib-bench $(B)/lib-attack $(B)/lib-json
HELPERS += $(LIBRARIAN_HELPERS)

$(LIBRARIAN_HELPERS): $(B)/%: $(TOP)/tests/librarian/%.c $(LIBRARIAN_CLIENT) \
		$(wildcard $(LIBRARIAN_CLIENT_DIR)/*.h)
	@mkdir -p $(B)
	$(CC) $(CFLAGS) $(SAN) -Wno-unused-parameter -I$(LIBRARIAN_CLIENT_DIR) \
		$(shell pkg-config --cflags jansson openssl) -o $@ $< $(LIBRARIAN_CLIENT) \
		$(shell pkg-config --libs jansson openssl) $(LIBLIBRARIAN_LIBS) -pthread
