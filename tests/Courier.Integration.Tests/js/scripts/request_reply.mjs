// A service answers requests; requests on another connection get the answers.
import { StringCodec } from "nats";
import { check, connectTo, run, uniquePrefix, within } from "../lib.mjs";

run("request_reply", async () => {
  const sc = StringCodec();
  const subject = `${uniquePrefix("req")}.echo`;
  const service = await connectTo();
  service.subscribe(subject, {
    callback: (err, m) => {
      if (!err) m.respond(sc.encode(`echo:${sc.decode(m.data)}`));
    },
  });
  await within(service.flush(), "service flush");

  const client = await connectTo();
  for (let i = 0; i < 20; i++) {
    const reply = await within(client.request(subject, sc.encode(`ping ${i}`), { timeout: 5000 }), `reply ${i}`);
    check(sc.decode(reply.data) === `echo:ping ${i}`, `reply ${i} was '${sc.decode(reply.data)}'`);
  }
  // The old-style (non-mux) request uses its own inbox subscription per request.
  const single = await within(client.request(subject, sc.encode("solo"), { timeout: 5000, noMux: true }), "noMux reply");
  check(sc.decode(single.data) === "echo:solo", `noMux reply was '${sc.decode(single.data)}'`);
  await client.close();
  await service.close();
});
