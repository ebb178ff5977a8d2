# SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
#
# man/: the manual pages, rendered, tested and installed.  Included by the
# top Makefile.

# Manual pages: man/NAME.SECTION.md (pandoc markdown, as rdma-core writes
# its pages) rendered to build/man/NAME.SECTION. pandoc 2.17 writes fonts
# mandoc does not know (\f[C], \f[V]) and a .PP after each heading, which
# mandoc -T lint reports; the sed and awk below write the same page in
# plain man(7), with .nh so that no identifier is hyphenated. Every name in
# a page's NAME line gets a one-line .so page at install time, so that
# man rf_sq_post_write finds rf_sq_post(3); man-test installs them and
# fails when man NAME finds nothing for a public name of the headers, or
# when two pages claim one name.
MAN_SRCS  := $(sort $(wildcard man/*.md))
MAN_PAGES := $(patsubst man/%.md,$(BUILD)/man/%,$(MAN_SRCS))
# The names a page documents: its NAME line, before the " - ".
MAN_NAMES  = sed -n '/^\# NAME/,/^\# /{/^[a-z_]/{s/ *\\* *-.*//;s/,/ /g;p;q}}'
# What man-test holds to a page each (tools/public-names.sh): detail/ is private.
PUBLIC_HEADERS := $(filter-out include/rdmafast/detail/%,$(HEADERS))
MAN_DATE  := $(shell d=$$(git log -1 --format=%cs -- man 2>/dev/null); echo $${d:-$$(date +%F)})

$(BUILD)/man/%: man/%.md
	@mkdir -p $(@D)
	pandoc -s -f markdown -t man -M date="$(MAN_DATE)" -M footer="rdmafast $(VERSION)" \
	    -M header="rdmafast" $< | \
	    sed -e 's/\\f\[[CV]\]/\\f[CR]/g' -e 's/\\f\[V\([BI]\)\]/\\f[C\1]/g' -e 's/^\.hy$$/.nh/' | \
	    awk 'prev ~ /^\.S[HS] / && $$0 == ".PP" { next } { print; prev = $$0 }' > $@

man: $(MAN_PAGES)

man-test: $(MAN_PAGES)
	mandoc -T lint -W warning $(MAN_PAGES)
	@for p in $(MAN_PAGES); do \
	    out=$$(LC_ALL=C.UTF-8 MANWIDTH=80 man --warnings -l $$p 2>&1 >/dev/null); \
	    if [ -n "$$out" ]; then echo "$$p: $$out"; exit 1; fi; \
	done
	@echo "man-test: $(words $(MAN_PAGES)) pages render without warnings"
	@d=$$(mktemp -d "$${TMPDIR:-/tmp}/rdmafast-man.XXXXXX"); trap 'rm -rf "$$d"' EXIT; \
	$(MAKE) --no-print-directory install-man DESTDIR=$$d MANDIR=/man > /dev/null || exit 1; \
	dup=$$(for src in $(MAN_SRCS); do $(MAN_NAMES) $$src; done | tr " " "\n" | sort | uniq -d); \
	[ -z "$$dup" ] || { echo "man-test: in the NAME line of two pages:" $$dup; exit 1; }; \
	names=$$(tools/public-names.sh $(PUBLIC_HEADERS)); missing=""; \
	for n in $$names; do \
	    MANPATH=$$d/man man -w $$n > /dev/null 2>&1 || missing="$$missing $$n"; \
	done; \
	[ -z "$$missing" ] || { echo "man-test: man NAME finds no page for:$$missing"; \
	    echo "man-test: add each to the NAME line of the page that documents it"; exit 1; }; \
	echo "man-test: man NAME finds a page for each of the $$(echo $$names | wc -w) public names (tools/public-names.sh)"

# Each page into man<section>/, and beside it a .so page for every other
# name it documents.
install-man: $(MAN_PAGES)
	@for src in $(MAN_SRCS); do \
	    page=$$(basename $$src .md); sec=$${page##*.}; name=$${page%.*}; \
	    d=$(DESTDIR)$(MANDIR)/man$$sec; install -d $$d; \
	    echo "install -m 644 $(BUILD)/man/$$page $$d/"; \
	    install -m 644 $(BUILD)/man/$$page $$d/ || exit 1; \
	    for n in $$($(MAN_NAMES) $$src); do \
	        [ "$$n" = "$$name" ] || echo ".so man$$sec/$$page" > $$d/$$n.$$sec || exit 1; \
	    done; \
	done

uninstall-man:
	@for src in $(MAN_SRCS); do \
	    page=$$(basename $$src .md); sec=$${page##*.}; d=$(DESTDIR)$(MANDIR)/man$$sec; \
	    for n in $$($(MAN_NAMES) $$src); do \
	        rm -f $$d/$$n.$$sec; \
	    done; \
	    rm -f $$d/$$page; \
	done
