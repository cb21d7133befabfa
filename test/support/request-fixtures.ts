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
