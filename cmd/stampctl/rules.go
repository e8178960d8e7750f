package main

// The commands of an article's duty_rules (duty-rules.md §9, §11):
// migrate-rules, and rules show, edit, add-version and archive, each
// change through shared/catalogue (EditRules: checked whole, an edit from
// the version read, logged with who, published).

import (
	"bytes"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
	"text/tabwriter"

	"stampduty/shared/catalogue"
	"stampduty/shared/duty"
	"stampduty/shared/stampduty"
)

// articlesMigrateRules previews, and with --apply stores, the migrated
// version of each article stored without duty_rules:
// `articles migrate-rules [--apply]`.
func (c *cli) articlesMigrateRules(fs *flag.FlagSet, args []string) error {
	apply := fs.Bool("apply", false, "store the migrated versions (default: list them and write nothing)")
	by := byFlag(fs)
	if _, err := parse(fs, args, 0, 0); err != nil {
		return err
	}
	who := ""
	if *apply {
		var err error
		if who, err = c.actor(*by); err != nil {
			return err
		}
	}
	admin, ts, err := c.catalogueAdmin()
	if err != nil {
		return err
	}
	m, err := admin.PreviewMigration(c.ctx)
	if err != nil {
		return storeErr("read the articles", err, ts...)
	}
	if len(m.Steps) == 0 {
		fmt.Fprintf(c.stdout, "every article has its duty_rules stored (%d articles): nothing to migrate; nothing was written\n", m.Left)
		return nil
	}
	w := tabwriter.NewWriter(c.stdout, 0, 0, 2, ' ', 0)
	fmt.Fprintln(w, "PURPOSE\tSTATE\tDOCUMENTID\tVERSION\tSTATUS\tRULE\tHASH")
	for _, e := range m.Steps {
		status := "active"
		if e.Retired() {
			status = "retired"
		}
		rule, hash := "-", "-"
		if len(e.Rules) == 1 {
			rule, hash = citation(e.Rules[0]), e.Rules[0].Hash()
		}
		fmt.Fprintf(w, "%s\t%s\t%s\t%d → %d\t%s\t%s\t%s\n", strconv.Quote(e.PurposeName), e.State, e.DocumentID, e.Version, e.Version+1, status, rule, hash)
	}
	if err := w.Flush(); err != nil {
		return fmt.Errorf("write the preview: %w", err)
	}
	if !*apply {
		fmt.Fprintf(c.stdout, "would migrate %d articles (%d have their duty_rules stored); nothing was written: run it again with --apply\n", len(m.Steps), m.Left)
		return nil
	}
	n, err := admin.MigrateRules(c.ctx, who, m)
	done := fmt.Sprintf("migrated %d articles, each logged as kind migrated by %s (duty_rules null → its version)", n, who)
	var np *catalogue.NotPublishedError
	switch {
	case errors.As(err, &np):
		fmt.Fprintln(c.stdout, done)
		return err
	case err != nil:
		return storeErr(fmt.Sprintf("migrate-rules stopped after %d of %d articles", n, len(m.Steps)), err, ts...)
	}
	fmt.Fprintln(c.stdout, done)
	return nil
}

// citation is a version's citation text, or "-".
func citation(v *duty.Version) string {
	if v.Citation == nil {
		return "-"
	}
	return v.Citation.Text
}

// rulesFlags name the article whose rules a command works on.
type rulesFlags struct {
	purpose, state *string
}

func defineRulesFlags(fs *flag.FlagSet) rulesFlags {
	return rulesFlags{
		purpose: fs.String("purpose", "", "the article's purpose_name (required)"),
		state:   fs.String("state", "", "the article's state (required)"),
	}
}

// check refuses a command line that does not name the article.
func (f rulesFlags) check(fs *flag.FlagSet) error {
	if *f.purpose == "" || *f.state == "" {
		return usagef("%s: --purpose and --state are required", fs.Name())
	}
	return nil
}

// indexFlag defines --version-index; "" when not given.
func indexFlag(fs *flag.FlagSet, usage string) *string {
	return fs.String("version-index", "", usage)
}

// versionIndex reads --version-index I for rules of n versions.
func versionIndex(s string, n int) (int, error) {
	i, err := strconv.Atoi(s)
	if err != nil || i < 0 || i >= n {
		return 0, usagef("--version-index: %s is not the index of a version: the article has %d (0 to %d; see articles rules show)",
			strconv.Quote(s), n, n-1)
	}
	return i, nil
}

// rulesShow prints an article's rule versions, or their JSON:
// `articles rules show --purpose P --state S [--json] [--version-index I]`.
func (c *cli) rulesShow(fs *flag.FlagSet, args []string) error {
	rf := defineRulesFlags(fs)
	asJSON := fs.Bool("json", false, "print the duty_rules JSON (indented) instead of the table")
	index := indexFlag(fs, "with --json, print only the version of index `I` (a JSON object, as rules edit reads it)")
	if _, err := parse(fs, args, 0, 0); err != nil {
		return err
	}
	if err := rf.check(fs); err != nil {
		return err
	}
	if *index != "" && !*asJSON {
		return usagef("%s: --version-index goes with --json", fs.Name())
	}
	admin, ts, err := c.catalogueAdmin()
	if err != nil {
		return err
	}
	e, err := admin.Articles.Entry(c.ctx, *rf.purpose, *rf.state)
	if err != nil {
		return storeErr("read the article", err, ts...)
	}
	if !*asJSON {
		return c.printRules(e)
	}
	data, _ := e.Rules.MarshalJSON() // never fails
	if *index != "" {
		i, err := versionIndex(*index, len(e.Rules))
		if err != nil {
			return err
		}
		data = e.Rules[i].JSON()
	}
	var b bytes.Buffer
	if err := json.Indent(&b, data, "", "  "); err != nil {
		return fmt.Errorf("write the rules: %w", err)
	}
	b.WriteByte('\n')
	_, err = c.stdout.Write(b.Bytes())
	return err
}

// printRules prints the article, then one row per version: its index,
// period, whether it is in force today, whether it is legacy, its hash
// and citation.
func (c *cli) printRules(e stampduty.CatalogueEntry) error {
	plural := "s"
	if len(e.Rules) == 1 {
		plural = ""
	}
	fmt.Fprintf(c.stdout, "%s in %s (documentId %s, version %d%s): %d duty rule version%s\n", strconv.Quote(e.PurposeName), e.State,
		e.DocumentID, e.Version, retiredNote(e), len(e.Rules), plural)
	if e.RulesDerived {
		fmt.Fprintln(c.stdout, "not stored: derived from its amount fields when read (duty-rules §9); `stampctl articles migrate-rules --apply` stores it")
	}
	today := duty.TodayInIndia(c.now())
	w := tabwriter.NewWriter(c.stdout, 0, 0, 2, ' ', 0)
	fmt.Fprintln(w, "INDEX\tFROM\tTO\tTODAY\tKIND\tHASH\tCITATION")
	for i, v := range e.Rules {
		from, to, now, kind := "-", "-", "", "own"
		if v.Period.From != "" {
			from = v.Period.From
		}
		if v.Period.To != "" {
			to = v.Period.To
		}
		if v.Period.In(today) {
			now = "in force"
		}
		if v.Legacy {
			kind = "legacy"
		}
		cite := citation(v)
		if v.Citation != nil {
			cite += " <" + v.Citation.URL + ">"
		}
		fmt.Fprintf(w, "%d\t%s\t%s\t%s\t%s\t%s\t%s\n", i, from, to, dash(now), kind, v.Hash(), cite)
	}
	if err := w.Flush(); err != nil {
		return fmt.Errorf("write the rules: %w", err)
	}
	return nil
}

// changeFlags are the flags of every command that changes rules.
type changeFlags struct {
	rulesFlags
	version, by *string
}

func defineChangeFlags(fs *flag.FlagSet) changeFlags {
	return changeFlags{rulesFlags: defineRulesFlags(fs),
		version: fs.String("version", "", "the article's version `V` you read (from articles list or rules show); the change is refused "+
			"if the article changed since (default: the version it reads now)"),
		by: byFlag(fs)}
}

// rulesChange changes an article's rules: it reads the article, makes its
// new versions with next from the stored ones (each a version's JSON),
// and stores them with catalogue.Admin.EditRules from --version (else the
// version read). Every problem is printed at its path and nothing is
// written; a stored change prints the article's versions as they are.
func (c *cli) rulesChange(fs *flag.FlagSet, f changeFlags, verb string,
	next func(e stampduty.CatalogueEntry, versions []json.RawMessage) ([]json.RawMessage, error)) error {
	if err := f.check(fs); err != nil {
		return err
	}
	who, admin, ts, err := c.catalogueChange(*f.by)
	if err != nil {
		return err
	}
	old, err := admin.Articles.Entry(c.ctx, *f.purpose, *f.state)
	if err != nil {
		return storeErr("read the article", err, ts...)
	}
	from := old.Version
	if *f.version != "" {
		if from, err = strconv.ParseInt(*f.version, 10, 64); err != nil || from < 0 {
			return usagef("--version: %s is not a version (a whole number from articles list)", strconv.Quote(*f.version))
		}
	}
	versions := make([]json.RawMessage, len(old.Rules))
	for i, v := range old.Rules {
		versions[i] = v.JSON()
	}
	versions, err = next(old, versions)
	if err != nil {
		return err
	}
	// Joined as they are: json.Marshal would escape <, > and & anew.
	data := append(append([]byte{'['}, bytes.Join(toBytes(versions), []byte{','})...), ']')
	e, err := admin.EditRules(c.ctx, who, from, *f.purpose, *f.state, data)
	var np *catalogue.NotPublishedError
	switch {
	case errors.As(err, &np):
		fmt.Fprintf(c.stdout, "%s the rules of %s in %s: version %d\n", verb, strconv.Quote(e.PurposeName), e.State, e.Version)
		return err
	case stampduty.ErrorCode(err) == stampduty.EINVALID:
		c.invalid(err)
		return refusedError{err}
	case err != nil:
		return storeErr("change the article", err, ts...)
	case e.Version == old.Version:
		fmt.Fprintf(c.stdout, "unchanged: the rules are as stored (version %d); nothing was written\n", e.Version)
		return nil
	}
	fmt.Fprintf(c.stdout, "%s: ", verb)
	return c.printRules(e)
}

// refusedError is duty_rules refused by their checks, whose problems
// were printed each at its path.
type refusedError struct{ err error }

func (e refusedError) Error() string {
	return "the duty_rules are refused (each problem above, at its path); nothing was written"
}

func (e refusedError) Unwrap() error { return e.err }

func toBytes(raws []json.RawMessage) [][]byte {
	out := make([][]byte, len(raws))
	for i, r := range raws {
		out[i] = r
	}
	return out
}

// readVersion reads one rule version, a JSON object, from the file at
// path (stdin for "-"), compacted.
func (c *cli) readVersion(path string) (json.RawMessage, error) {
	var data []byte
	var err error
	if path == "-" {
		data, err = io.ReadAll(c.stdin)
	} else {
		data, err = os.ReadFile(path)
	}
	if err != nil {
		return nil, fmt.Errorf("read the rule version: %w", err)
	}
	var b bytes.Buffer
	if err := json.Compact(&b, data); err != nil {
		return nil, fmt.Errorf("%s is not JSON: %w", path, err)
	}
	if !bytes.HasPrefix(b.Bytes(), []byte("{")) {
		return nil, fmt.Errorf("%s is not a JSON object: a rule version is one object (rules show --json --version-index I prints one)", path)
	}
	return b.Bytes(), nil
}

// rulesEdit replaces one version: `articles rules edit --purpose P
// --state S --version-index I --file F`.
func (c *cli) rulesEdit(fs *flag.FlagSet, args []string) error {
	f := defineChangeFlags(fs)
	index := indexFlag(fs, "the index `I` of the version to replace (from rules show), from 0")
	file := fs.String("file", "", "the file `F` holding the new version, a JSON object (- for stdin)")
	if _, err := parse(fs, args, 0, 0); err != nil {
		return err
	}
	if *index == "" || *file == "" {
		return usagef("%s: --version-index and --file are required", fs.Name())
	}
	return c.rulesChange(fs, f, "edited", func(_ stampduty.CatalogueEntry, vs []json.RawMessage) ([]json.RawMessage, error) {
		i, err := versionIndex(*index, len(vs))
		if err != nil {
			return nil, err
		}
		if vs[i], err = c.readVersion(*file); err != nil {
			return nil, err
		}
		return vs, nil
	})
}

// rulesAddVersion appends a version: `articles rules add-version
// --purpose P --state S --file F [--close-previous]`.
func (c *cli) rulesAddVersion(fs *flag.FlagSet, args []string) error {
	f := defineChangeFlags(fs)
	file := fs.String("file", "", "the file `F` holding the new version, a JSON object (- for stdin)")
	closePrev := fs.Bool("close-previous", false, "set the last version's effectiveTo, when it is open (null), to the new version's effectiveFrom")
	if _, err := parse(fs, args, 0, 0); err != nil {
		return err
	}
	if *file == "" {
		return usagef("%s: --file is required", fs.Name())
	}
	err := c.rulesChange(fs, f, "added a version", func(_ stampduty.CatalogueEntry, vs []json.RawMessage) ([]json.RawMessage, error) {
		v, err := c.readVersion(*file)
		if err != nil {
			return nil, err
		}
		if *closePrev && len(vs) > 0 {
			last := len(vs) - 1
			to, err := member(vs[last], "effectiveTo")
			if err != nil {
				return nil, err
			}
			if to != nil && string(to) != "null" {
				return nil, fmt.Errorf("--close-previous: the last version, duty_rules[%d], is not open: its effectiveTo is %s", last, to)
			}
			from, err := member(v, "effectiveFrom")
			if err != nil {
				return nil, err
			}
			var date string
			if json.Unmarshal(from, &date) != nil {
				return nil, fmt.Errorf("--close-previous: the new version's effectiveFrom must be a date (YYYY-MM-DD), not %s", orNull(from))
			}
			if vs[last], err = setMember(vs[last], "effectiveTo", from); err != nil {
				return nil, err
			}
		}
		return append(vs, v), nil
	})
	var se *stampduty.Error
	if errors.As(err, &se) && !*closePrev {
		for _, f := range se.Fields {
			if strings.Contains(f.Message, "overlaps") {
				fmt.Fprintln(c.stderr, "--close-previous sets the last version's effectiveTo to the new version's effectiveFrom (duty-rules §7)")
				break
			}
		}
	}
	return err
}

// rulesArchive removes a version: `articles rules archive --purpose P
// --state S --version-index I`. The change log keeps it.
func (c *cli) rulesArchive(fs *flag.FlagSet, args []string) error {
	f := defineChangeFlags(fs)
	index := indexFlag(fs, "the index `I` of the version to remove (from rules show), from 0")
	if _, err := parse(fs, args, 0, 0); err != nil {
		return err
	}
	if *index == "" {
		return usagef("%s: --version-index is required", fs.Name())
	}
	return c.rulesChange(fs, f, "archived a version (articles log keeps it)", func(_ stampduty.CatalogueEntry, vs []json.RawMessage) ([]json.RawMessage, error) {
		i, err := versionIndex(*index, len(vs))
		if err != nil {
			return nil, err
		}
		return append(vs[:i:i], vs[i+1:]...), nil
	})
}

func orNull(raw json.RawMessage) string {
	if raw == nil {
		return "absent"
	}
	return string(raw)
}

// objectMember is one name and value of a JSON object, in its order.
type objectMember struct {
	name  string
	value json.RawMessage
}

// members returns the members of the JSON object obj, in order.
func members(obj json.RawMessage) ([]objectMember, error) {
	dec := json.NewDecoder(bytes.NewReader(obj))
	if t, err := dec.Token(); err != nil || t != json.Delim('{') {
		return nil, errors.New("a rule version must be a JSON object")
	}
	var ms []objectMember
	for dec.More() {
		t, err := dec.Token()
		if err != nil {
			return nil, err
		}
		var v json.RawMessage
		if err := dec.Decode(&v); err != nil {
			return nil, err
		}
		ms = append(ms, objectMember{name: t.(string), value: v})
	}
	return ms, nil
}

// member returns the value of name in the JSON object obj, nil when it
// has none.
func member(obj json.RawMessage, name string) (json.RawMessage, error) {
	ms, err := members(obj)
	for _, m := range ms {
		if m.name == name {
			return m.value, err
		}
	}
	return nil, err
}

// setMember returns obj with name set to value, in its place (the other
// members as they were written, in their order), or last when obj has
// no such member.
func setMember(obj json.RawMessage, name string, value json.RawMessage) (json.RawMessage, error) {
	ms, err := members(obj)
	if err != nil {
		return nil, err
	}
	found := false
	for i := range ms {
		if ms[i].name == name {
			ms[i].value, found = value, true
		}
	}
	if !found {
		ms = append(ms, objectMember{name, value})
	}
	var b bytes.Buffer
	b.WriteByte('{')
	for i, m := range ms {
		if i > 0 {
			b.WriteByte(',')
		}
		k, _ := json.Marshal(m.name) // a string
		b.Write(k)
		b.WriteByte(':')
		b.Write(m.value)
	}
	b.WriteByte('}')
	return b.Bytes(), nil
}
