// The bare server's writes on disk, for `baseline.js --db FILE`: the same job as our durable
// writes (a create, a withdrawal with its journal row), written the way one would by hand with
// better-sqlite3: one prepared statement each, one transaction per request, run on the main
// thread, in a file with the durability our services ship with (WAL, synchronous FULL). It is the
// ruler a durable write is judged against beside the in-memory one: the work SQLite and the disk
// must do for any server, written without layers.
import Database from 'better-sqlite3';

export interface BareData {
  /** The new to-do's id. */
  create(title: string, done: boolean): number;
  /** The balance left, or why nothing was taken. */
  withdraw(account: string, amount: number): number | 'unknown-account' | 'insufficient';
  balance(account: string): number | undefined;
  todo(id: number): { id: number; title: string; done: boolean } | undefined;
}

export function openBareSqlite(file: string, accounts: ReadonlyMap<string, number>): BareData {
  const db = new Database(file);
  db.pragma('journal_mode = WAL');
  db.pragma('synchronous = FULL');
  db.exec(`CREATE TABLE IF NOT EXISTS todos (id INTEGER PRIMARY KEY, title TEXT NOT NULL, done INTEGER NOT NULL);
    CREATE TABLE IF NOT EXISTS accounts (name TEXT PRIMARY KEY, balance INTEGER NOT NULL CHECK (balance >= 0));
    CREATE TABLE IF NOT EXISTS withdrawals (
      id INTEGER PRIMARY KEY,
      account TEXT NOT NULL REFERENCES accounts (name),
      amount INTEGER NOT NULL,
      balance_after INTEGER NOT NULL,
      at TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ', 'now'))
    );
    INSERT OR IGNORE INTO todos (id, title, done) VALUES (1, 'Buy milk', 0);`);
  const seed = db.prepare('INSERT OR IGNORE INTO accounts (name, balance) VALUES (?, ?)');
  for (const [name, balance] of accounts) seed.run(name, balance);

  const insertTodo = db.prepare<[string, number]>('INSERT INTO todos (title, done) VALUES (?, ?)');
  const take = db.prepare<[number, string, number], { balance: number }>(
    'UPDATE accounts SET balance = balance - ? WHERE name = ? AND balance >= ? RETURNING balance',
  );
  const journal = db.prepare<[string, number, number]>(
    'INSERT INTO withdrawals (account, amount, balance_after) VALUES (?, ?, ?)',
  );
  const selectBalance = db.prepare<[string], { balance: number }>(
    'SELECT balance FROM accounts WHERE name = ?',
  );
  const selectTodo = db.prepare<[number], { id: number; title: string; done: number }>(
    'SELECT id, title, done FROM todos WHERE id = ?',
  );

  const create = db.transaction((title: string, done: boolean) =>
    Number(insertTodo.run(title, done ? 1 : 0).lastInsertRowid),
  );
  const withdraw = db.transaction((account: string, amount: number) => {
    const taken = take.get(amount, account, amount);
    if (taken === undefined)
      return selectBalance.get(account) === undefined ? 'unknown-account' : 'insufficient';
    journal.run(account, amount, taken.balance);
    return taken.balance;
  });
  return {
    create: (title, done) => create.immediate(title, done),
    withdraw: (account, amount) => withdraw.immediate(account, amount),
    balance: (account) => selectBalance.get(account)?.balance,
    todo: (id) => {
      const row = selectTodo.get(id);
      return row === undefined ? undefined : { id: row.id, title: row.title, done: row.done === 1 };
    },
  };
}
