import { type Static, Type } from '@sinclair/typebox';
import { Uuid } from '../../shared/types.js';
import { Category } from '../menus/schemas.js';
import { Venue } from '../venues/schemas.js';

/** The provisioning file (native-config/demo.json has this shape; DESIGN.md "Demo"). */
export const Provisioning = Type.Object({
  tenants: Type.Array(
    Type.Object({
      id: Uuid,
      name: Type.String({ minLength: 1 }),
      clients: Type.Array(
        Type.Object({ clientId: Type.String({ minLength: 1 }), clientSecret: Type.String({ minLength: 8 }) }),
      ),
      users: Type.Array(
        Type.Object({
          username: Type.String({ minLength: 1, pattern: '^(?!anonymous$)' }),
          password: Type.String({ minLength: 8 }),
          scope: Type.String({ pattern: '^read( write)?$' }),
        }),
      ),
      venues: Type.Array(Venue),
      menus: Type.Array(Type.Object({ id: Type.String({ minLength: 1 }), root: Category })),
      warehouses: Type.Array(Type.Object({ id: Uuid, name: Type.String({ minLength: 1 }) })),
    }),
  ),
});
export type Provisioning = Static<typeof Provisioning>;
export type TenantSpec = Provisioning['tenants'][number];
