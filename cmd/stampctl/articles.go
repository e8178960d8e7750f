package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"

	"stampduty/shared/stampduty"
	"stampduty/shared/stampduty/stampjson"
	"stampduty/shared/store"
)

// idBlock is how many article ids an import reserves per counter update.
const idBlock = 10

// articlesImport checks a catalogue file and upserts its articles:
// `articles import FILE`. The whole file is checked first; if any article is
// invalid nothing is written and every error is printed, one per line.
func (c *cli) articlesImport(fs *flag.FlagSet, args []string) error {
	rest, err := parse(fs, args, 1, 1)
	if err != nil {
		return err
	}
	name, data, err := c.readInput(rest[0])
	if err != nil {
		return err
	}
	arts, err := stampjson.DecodeArticles(data)
	if err != nil {
		return c.reportInvalid(name, data, err)
	}
	articles, err := c.table(articlesSpec)
	if err != nil {
		return err
	}
	counters, err := c.table(countersSpec)
	if err != nil {
		return err
	}
	db, err := c.openDB()
	if err != nil {
		return err
	}
	created, updated, err := db.Articles(articles.name).Upsert(c.ctx, db.IDs(counters.name, idBlock), arts)
	if err != nil {
		return storeErr(fmt.Sprintf("import %s stopped after %d created, %d updated of %d articles", name, created, updated, len(arts)),
			err, articles, counters)
	}
	fmt.Fprintf(c.stdout, "imported %d articles: %d created, %d updated\n", len(arts), created, updated)
	return nil
}

// reportInvalid prints each failing article field of an invalid catalogue
// (data, read from name) to stderr, one "path: message" per line, and
// returns the summary error.
func (c *cli) reportInvalid(name string, data []byte, err error) error {
	var e *stampduty.Error
	if !errors.As(err, &e) {
		return fmt.Errorf("read %s: %w", name, err)
	}
	for _, f := range e.Fields {
		if f.Path != "" { // a file-level problem is the summary itself
			fmt.Fprintf(c.stderr, "%s: %s\n", f.Path, f.Message)
		}
	}
	msg := e.Message
	var syn *json.SyntaxError
	if errors.As(e.Err, &syn) {
		line, col := position(data, syn.Offset)
		msg = fmt.Sprintf("%s: line %d, column %d: %v", msg, line, col, syn)
	}
	return fmt.Errorf("%s: %s; nothing was imported", name, msg)
}

// position returns the 1-based line and column (in bytes) just before
// offset in data, where encoding/json reports a syntax error.
func position(data []byte, offset int64) (line, col int) {
	offset = min(max(offset-1, 0), int64(len(data)))
	before := data[:offset]
	line = 1 + bytes.Count(before, []byte("\n"))
	col = 1 + len(before) - (bytes.LastIndexByte(before, '\n') + 1)
	return line, col
}

// readInput reads the file at path, or stdin when path is "-", and returns
// the name to use in messages with the contents.
func (c *cli) readInput(path string) (string, []byte, error) {
	if path == "-" {
		data, err := io.ReadAll(c.stdin)
		if err != nil {
			return "stdin", nil, fmt.Errorf("read stdin: %w", err)
		}
		return "stdin", data, nil
	}
	data, err := os.ReadFile(path)
	if err != nil {
		return path, nil, fmt.Errorf("read the articles: %w", err)
	}
	return path, data, nil
}

// articlesExport writes the whole catalogue in the format import reads:
// `articles export [FILE]`, to stdout when FILE is absent or "-".
func (c *cli) articlesExport(fs *flag.FlagSet, args []string) error {
	rest, err := parse(fs, args, 0, 1)
	if err != nil {
		return err
	}
	arts, err := storeCall(c, articlesSpec, "read the articles", func(db *store.DB, name string) ([]stampduty.Article, error) {
		return db.Articles(name).All(c.ctx)
	})
	if err != nil {
		return err
	}
	data, err := stampjson.EncodeArticles(arts)
	if err != nil {
		return err
	}
	if len(rest) == 0 || rest[0] == "-" {
		_, err = c.stdout.Write(data)
	} else if err = os.WriteFile(rest[0], data, 0o644); err == nil {
		fmt.Fprintf(c.stdout, "exported %d articles to %s\n", len(arts), rest[0])
	}
	if err != nil {
		return fmt.Errorf("write the articles: %w", err)
	}
	return nil
}
