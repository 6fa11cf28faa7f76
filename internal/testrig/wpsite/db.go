package wpsite

import (
	"bytes"
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/browserop/browserop/internal/testrig/rig"
)

// The database WordPress uses, and its MariaDB account.
const (
	dbName = "wordpress"
	dbUser = "wordpress"
)

// database is a private MariaDB server: its own data directory, reached
// only through a Unix socket (no TCP port), run as the current user.
type database struct {
	client string
	socket string
	srv    *rig.Server
}

// mariadbFlags are the server's options besides its paths: small, quick and
// careless with durability, since the data is thrown away.
var mariadbFlags = []string{
	"--skip-networking",
	"--skip-name-resolve",
	"--skip-log-bin",
	"--innodb-buffer-pool-size=32M",
	"--innodb-log-file-size=8M",
	"--innodb-flush-log-at-trx-commit=0",
	"--character-set-server=utf8mb4",
	"--collation-server=utf8mb4_unicode_ci",
	"--max-connections=100",
}

// startDatabase initialises a data directory in dir/mysql, starts mariadbd
// on socket and creates WordPress's database and account (password pass).
func startDatabase(ctx context.Context, p programs, dir, socket, pass string) (*database, error) {
	data := filepath.Join(dir, "mysql")
	userFlag := []string{}
	if os.Geteuid() == 0 {
		// mariadbd refuses to run as root unless told to.
		userFlag = []string{"--user=root"}
	}
	// A root account without password, reached only through the socket:
	// the same for a developer and for root in CI.
	args := append([]string{"--no-defaults", "--datadir=" + data, "--auth-root-authentication-method=normal",
		"--skip-test-db", "--skip-name-resolve"}, userFlag...)
	args = append(args, "--innodb-log-file-size=8M", "--innodb-buffer-pool-size=32M")
	install := exec.CommandContext(ctx, p.installDB, args...)
	if out, err := install.CombinedOutput(); err != nil {
		return nil, fmt.Errorf("mariadb-install-db: %v: %s", err, lastLines(string(out), 20))
	}
	srvArgs := append([]string{"--no-defaults", "--datadir=" + data, "--socket=" + socket,
		"--pid-file=" + filepath.Join(dir, "mysql.pid"), "--tmpdir=" + dir,
		"--log-error=" + filepath.Join(dir, "mysql.err")}, userFlag...)
	srvArgs = append(srvArgs, mariadbFlags...)
	srv, err := rig.StartServer("mariadbd", exec.Command(p.mariadbd, srvArgs...), filepath.Join(dir, "mysql.out"))
	if err != nil {
		return nil, err
	}
	db := &database{client: p.client, socket: socket, srv: srv}
	if err := db.waitReady(ctx, filepath.Join(dir, "mysql.err")); err != nil {
		srv.Stop(5 * time.Second)
		return nil, err
	}
	create := fmt.Sprintf("CREATE DATABASE %s CHARACTER SET utf8mb4 COLLATE utf8mb4_unicode_ci;\n"+
		"CREATE USER '%s'@'localhost' IDENTIFIED BY %s;\n"+
		"GRANT ALL PRIVILEGES ON %s.* TO '%s'@'localhost';\n",
		dbName, dbUser, quote(pass), dbName, dbUser)
	if _, err := db.run(ctx, "", create); err != nil {
		srv.Stop(5 * time.Second)
		return nil, fmt.Errorf("create database: %w", err)
	}
	return db, nil
}

// waitReady waits until the server answers a query on its socket.
func (db *database) waitReady(ctx context.Context, errLog string) error {
	ctx, cancel := context.WithTimeout(ctx, 60*time.Second)
	defer cancel()
	for {
		if err := db.srv.Exited(); err != nil {
			return fmt.Errorf("%w; error log: %s", err, rig.Tail(errLog, 1500))
		}
		if c, err := net.Dial("unix", db.socket); err == nil {
			c.Close()
			if _, err := db.run(ctx, "", "SELECT 1"); err == nil {
				return nil
			}
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("mariadbd not ready: %w; error log: %s", ctx.Err(), rig.Tail(errLog, 1500))
		case <-time.After(20 * time.Millisecond):
		}
	}
}

// run runs sql (one or more statements) as MariaDB's root in database
// schema ("" for none) and returns the rows of its output: tab-separated
// fields, unescaped, without column names.
func (db *database) run(ctx context.Context, schema, sql string) ([][]string, error) {
	args := []string{"--no-defaults", "--socket=" + db.socket, "--user=root",
		"--batch", "--skip-column-names", "--default-character-set=utf8mb4"}
	if schema != "" {
		args = append(args, "--database="+schema)
	}
	cmd := exec.CommandContext(ctx, db.client, args...)
	cmd.Stdin = strings.NewReader(sql)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	if err := cmd.Run(); err != nil {
		return nil, fmt.Errorf("mariadb: %v: %s", err, strings.TrimSpace(errb.String()))
	}
	if out.Len() == 0 {
		return nil, nil
	}
	var rows [][]string
	for _, line := range strings.Split(strings.TrimSuffix(out.String(), "\n"), "\n") {
		fields := strings.Split(line, "\t")
		for i, f := range fields {
			fields[i] = unescapeBatch(f)
		}
		rows = append(rows, fields)
	}
	return rows, nil
}

// unescapeBatch undoes the client's batch-mode escaping of a field.
func unescapeBatch(s string) string {
	if !strings.Contains(s, `\`) {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] != '\\' || i+1 == len(s) {
			b.WriteByte(s[i])
			continue
		}
		i++
		switch s[i] {
		case 'n':
			b.WriteByte('\n')
		case 't':
			b.WriteByte('\t')
		case '0':
			b.WriteByte(0)
		default:
			b.WriteByte(s[i])
		}
	}
	return b.String()
}

// quote returns s as a MariaDB string literal.
func quote(s string) string {
	var b strings.Builder
	b.WriteByte('\'')
	for i := 0; i < len(s); i++ {
		switch c := s[i]; c {
		case '\\':
			b.WriteString(`\\`)
		case '\'':
			b.WriteString(`\'`)
		case 0:
			b.WriteString(`\0`)
		case 0x1a:
			b.WriteString(`\Z`)
		default:
			b.WriteByte(c)
		}
	}
	b.WriteByte('\'')
	return b.String()
}

// bind replaces each ? in query, in order, by the literal of the matching
// argument: a string (quoted), an integer, a bool (1 or 0) or nil (NULL).
// Every ? is a placeholder, even one inside a literal of query.
func bind(query string, args []any) (string, error) {
	var b strings.Builder
	n := 0
	for i := 0; i < len(query); i++ {
		if query[i] != '?' {
			b.WriteByte(query[i])
			continue
		}
		if n == len(args) {
			return "", fmt.Errorf("sql: more placeholders than the %d arguments", len(args))
		}
		switch v := args[n].(type) {
		case nil:
			b.WriteString("NULL")
		case string:
			b.WriteString(quote(v))
		case int:
			b.WriteString(strconv.Itoa(v))
		case int64:
			b.WriteString(strconv.FormatInt(v, 10))
		case uint64:
			b.WriteString(strconv.FormatUint(v, 10))
		case bool:
			if v {
				b.WriteString("1")
			} else {
				b.WriteString("0")
			}
		default:
			return "", fmt.Errorf("sql: argument %d: unsupported type %T", n+1, v)
		}
		n++
	}
	if n != len(args) {
		return "", fmt.Errorf("sql: %d placeholders for %d arguments", n, len(args))
	}
	return b.String(), nil
}

// lastLines returns the last n lines of s.
func lastLines(s string, n int) string {
	lines := strings.Split(strings.TrimSpace(s), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}
