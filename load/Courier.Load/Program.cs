using System.Diagnostics;
using System.Globalization;
using System.Text;
using Courier.Load;

// First side-by-side figures (pub-only 16 B, pub/sub 1:1 16 B): Courier vs Debian's nats-server,
// alternating servers, a fresh server per round, medians and the spread of per-round ratios.
// Usage: dotnet run -c Release --project load/Courier.Load -- [--rounds 3] [--messages 2000000]
var rounds = 3;
var messages = 2_000_000;
for (var i = 0; i + 1 < args.Length; i += 2)
{
    switch (args[i])
    {
        case "--rounds":
            rounds = int.Parse(args[i + 1], CultureInfo.InvariantCulture);
            break;
        case "--messages":
            messages = int.Parse(args[i + 1], CultureInfo.InvariantCulture);
            break;
    }
}

var root = AppContext.BaseDirectory;
while (!File.Exists(Path.Combine(root, "Courier.slnx")))
{
    root = Path.GetDirectoryName(root.TrimEnd('/')) ?? throw new InvalidOperationException("repository root not found");
}

var scenarios = new (string Id, Func<int, int, double> Run)[]
{
    ("pub16", PubOnly),
    ("ps16", PubSub),
};
string[] servers = ["nats-server", "courier"];
var table = new StringBuilder("| scenario | nats-server median msgs/s | courier median msgs/s | ratio (median) | ratio min-max |\n|---|---|---|---|---|\n");
foreach (var (id, run) in scenarios)
{
    var results = servers.ToDictionary(s => s, _ => new List<double>());
    for (var round = 0; round < rounds; round++)
    {
        foreach (var server in servers)
        {
            using var process = ServerProcess.Start(server, root);
            var rate = run(process.Port, messages);
            results[server].Add(rate);
            Console.WriteLine($"{id} round {round + 1} {server}: {rate:N0} msgs/s");
        }
    }

    var ratios = results["courier"].Zip(results["nats-server"], (c, n) => c / n).ToList();
    table.Append(CultureInfo.InvariantCulture, $"| {id} | {Median(results["nats-server"]):N0} | {Median(results["courier"]):N0} | {Median(ratios):F2} | {ratios.Min():F2}-{ratios.Max():F2} |\n");
}

Console.WriteLine();
Console.WriteLine($"{Environment.ProcessorCount} cores, {rounds} rounds, {messages:N0} messages per run");
Console.WriteLine(table);
return 0;

static double Median(List<double> values)
{
    var sorted = values.Order().ToList();
    return sorted.Count % 2 == 1 ? sorted[sorted.Count / 2] : (sorted[(sorted.Count / 2) - 1] + sorted[sorted.Count / 2]) / 2;
}

static byte[] PubBatch(int count)
{
    var one = Encoding.ASCII.GetBytes("PUB bench 16\r\n0123456789abcdef\r\n");
    var batch = new byte[one.Length * count];
    for (var i = 0; i < count; i++)
    {
        one.CopyTo(batch, i * one.Length);
    }

    return batch;
}

static double PubOnly(int port, int messages)
{
    const int PerBatch = 2000; // messages per socket write
    using var client = new RawClient(port);
    var batch = PubBatch(PerBatch);
    var sw = Stopwatch.StartNew();
    for (var sent = 0; sent < messages; sent += PerBatch)
    {
        client.Send(batch);
    }

    client.Flush();
    return messages / sw.Elapsed.TotalSeconds;
}

static double PubSub(int port, int messages)
{
    const int PerBatch = 2000;
    const int FrameSize = 34; // "MSG bench 1 16\r\n" + 16 bytes + CRLF
    using var subscriber = new RawClient(port);
    subscriber.Send("SUB bench 1\r\n");
    subscriber.Flush();
    using var publisher = new RawClient(port);
    var batch = PubBatch(PerBatch);
    var sw = Stopwatch.StartNew();
    var reader = Task.Run(() => subscriber.ReadBytes((long)messages * FrameSize));
    for (var sent = 0; sent < messages; sent += PerBatch)
    {
        publisher.Send(batch);
    }

    if (!reader.Wait(TimeSpan.FromMinutes(2)))
    {
        throw new TimeoutException("subscriber did not receive every message in time");
    }

    return messages / sw.Elapsed.TotalSeconds;
}
