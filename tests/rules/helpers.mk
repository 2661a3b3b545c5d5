# The shared rules module's unit test (tests/rules/rules.t runs it).
HELPERS += $(B)/test_rules

$(B)/test_rules: $(TOP)/tests/rules/test_rules.c $(RULES_SRCS) $(RULES_HDRS)
	@mkdir -p $(B)
	$(CC) $(CFLAGS) $(SAN) $(RULES_CFLAGS) -o $@ $< $(RULES_SRCS)
