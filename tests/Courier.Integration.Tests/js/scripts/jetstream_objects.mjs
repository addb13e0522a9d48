// Object Store through nats.js (client-side on a stream): put a multi-chunk object, get it back
// byte for byte, info, list, delete.
import { check, connectTo, run, uniquePrefix, within } from "../lib.mjs";

async function readAll(stream) {
  const chunks = [];
  for await (const c of stream) chunks.push(c);
  return Buffer.concat(chunks);
}

run("jetstream_objects", async () => {
  const nc = await connectTo();
  const js = nc.jetstream();
  const bucket = uniquePrefix("os").replaceAll(".", "_");
  const os = await within(js.views.os(bucket), "create object store");

  const data = Buffer.alloc(300_000);
  for (let i = 0; i < data.length; i++) data[i] = (i * 31 + 7) & 0xff;
  const info = await within(os.putBlob({ name: "blob.bin", options: { max_chunk_size: 64 * 1024 } }, data), "put object");
  check(info.size === data.length && info.chunks === 5, `stored ${info.size} bytes in ${info.chunks} chunks`);

  const back = await within(os.getBlob("blob.bin"), "get object");
  check(back !== null && Buffer.compare(Buffer.from(back), data) === 0, "object read back differs");
  const meta = await within(os.info("blob.bin"), "object info");
  check(meta.name === "blob.bin" && meta.size === data.length, `info ${meta.name} ${meta.size}`);

  await within(os.putBlob({ name: "small.txt" }, Buffer.from("hello")), "put small");
  const names = (await within(os.list(), "list")).map((o) => o.name).sort();
  check(names.join(",") === "blob.bin,small.txt", `list ${names}`);

  await within(os.delete("blob.bin"), "delete object");
  check((await within(os.getBlob("blob.bin"), "get deleted")) === null, "a deleted object is gone");
  await nc.close();
});
