import { measureFloor } from './floor';
import { startServices } from './support/stack';
import { measureTurnOverhead } from './turn-overhead';

const services = await startServices();
try {
  const db = await services.createDatabase('floor');
  console.log('floor1', await measureFloor({ databaseUrl: db, redisUrl: services.redis.url, iterations: 400, inFlight: 1 }));
  console.log('floor16', await measureFloor({ databaseUrl: db, redisUrl: services.redis.url, iterations: 800, inFlight: 16 }));
  console.log(JSON.stringify(await measureTurnOverhead(services, { inFlight: 1, turnsPerLane: 200, threadsPerLane: 10, warmupPerLane: 30 })));
  console.log(JSON.stringify(await measureTurnOverhead(services, { inFlight: 16, turnsPerLane: 25, threadsPerLane: 2, warmupPerLane: 5 })));
} finally {
  await services.stop();
}
