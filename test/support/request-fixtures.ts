// The smallest data-access request over the demo datasource (schema demo, seeded by seedDemoDatasource): one
// dataset, `eu`, with the orders' ids. For tests that need a request, not a particular scope.
export const demoOrdersRequest = (title = 'EU orders') => ({
  title,
  scope: {
    datasources: [
      {
        datasets: [
          { namespace: 'eu', source: { kind: 'postgres', name: 'demo', table: 'orders' }, columns: ['id'] },
        ],
      },
    ],
  },
});

// A scope over the demo datasource with two datasets: `eu_orders`, the EU orders that are paid or shipped (a filter
// with a nested group) joined to their customers' country, and `products`.
export const demoJoinedScope = {
  datasources: [
    {
      datasets: [
        {
          namespace: 'eu_orders',
          source: { kind: 'postgres', name: 'demo', table: 'orders' },
          columns: ['id', 'customer_id', 'total', 'status', 'region', 'customers.country'],
          filters: {
            logic: 'and',
            conditions: [
              { condition: { column: 'region', op: 'eq', value: 'EU' } },
              {
                group: {
                  logic: 'or',
                  conditions: [
                    { condition: { column: 'status', op: 'eq', value: 'paid' } },
                    { condition: { column: 'status', op: 'in', value: ['shipped'] } },
                  ],
                },
              },
            ],
          },
          joins: [
            {
              namespace: 'customers',
              on: 'orders.customer_id = customers.id',
              source: { kind: 'postgres', name: 'demo', table: 'customers' },
              type: 'inner',
            },
          ],
        },
        {
          namespace: 'products',
          source: { kind: 'postgres', name: 'demo', table: 'products' },
          columns: ['id', 'name', 'category'],
        },
      ],
    },
  ],
};
