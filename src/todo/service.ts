// The to-do service assembled: its store on the configured database, its routes and schemas.
import type { DbSpec } from '../config.js';
import type { StoreOptions } from '../db/store-options.js';
import type { ServiceDefinition } from '../http/service.js';
import { TODO_SCHEMA } from './model.js';
import { todoRoutes, type TodoRouteOptions } from './routes.js';
import type { TodoStore } from './store.js';
import { openSqliteTodoStore } from './store-sqlite.js';
import { openPostgresTodoStore } from './store-postgres.js';

export async function openTodoStore(db: DbSpec, options: StoreOptions = {}): Promise<TodoStore> {
  switch (db.kind) {
    case 'memory':
      return openSqliteTodoStore(':memory:', options);
    case 'sqlite':
      return openSqliteTodoStore(db.path, options);
    case 'postgres':
      return openPostgresTodoStore(db.url, options);
  }
}

export async function createTodoService(
  db: DbSpec,
  options: StoreOptions = {},
  routeOptions: TodoRouteOptions = {},
): Promise<ServiceDefinition> {
  const store = await openTodoStore(db, options);
  return {
    title: 'To-do service',
    version: '0.1.0',
    routes: todoRoutes(store, routeOptions),
    components: { Todo: TODO_SCHEMA },
    ready: () => store.ping(),
    close: () => store.close(),
  };
}
