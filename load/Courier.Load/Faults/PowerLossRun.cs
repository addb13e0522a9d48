using System.Diagnostics;
using System.Globalization;
using System.Text;
using NATS.Client.Core;
using NATS.Client.JetStream;
using NATS.Client.JetStream.Models;

namespace Courier.Load.Faults;

/// <summary>
/// Power loss side by side (load/powerloss.sh): each server keeps its store on a lazyfs mount
/// (tools/lazyfs), and each cycle publishes with PubAcks and acks a durable consumer with double acks
/// for a random short time, kill -9s the server, cuts the power (lazyfs drops or tears what was not
/// fsynced), restarts it on the surviving bytes and checks every acknowledged publish (sequence,
/// subject, payload), gaps, duplicates and the consumer's acks against what the client was told.
/// </summary>
internal static class PowerLossRun
{
    private const string Stream = "PL";
    private const string Durable = "pl";
    private const int Window = 16;             // publishes in flight
    private const int MaxPerCycle = 600;       // publishes per cycle, so a check reads a bounded stream

    public static async Task<int> MainAsync(ReadOnlyMemory<string> argv, string root)
    {
        var args = argv.ToArray();
        string? mount = null;
        var servers = new[] { "courier", "nats-server" };
        var cycles = 50;
        var minutes = 10.0;
        var cuts = new[] { "crash" };
        var seed = 1;
        string? outFile = null;
        var settle = true;
        for (var i = 0; i < args.Length; i++)
        {
            var value = i + 1 < args.Length ? args[i + 1] : "";
            switch (args[i])
            {
                case "--mount": mount = value; break;
                case "--servers": servers = value.Split(',', StringSplitOptions.RemoveEmptyEntries); break;
                case "--cycles": cycles = int.Parse(value, CultureInfo.InvariantCulture); break;
                case "--minutes": minutes = double.Parse(value, CultureInfo.InvariantCulture); break;
                case "--cut": cuts = value.Split(',', StringSplitOptions.RemoveEmptyEntries); break;
                case "--seed": seed = int.Parse(value, CultureInfo.InvariantCulture); break;
                case "--out": outFile = value; break;
                case "--strict": settle = false; i--; break;
                default:
                    Console.Error.WriteLine($"unknown argument {args[i]}; use --mount DIR --servers courier,nats-server --cycles N --minutes M --cut crash,torn,reorder --seed N --out FILE [--strict]");
                    return 2;
            }

            i++;
        }

        if (mount is null || !File.Exists(Path.Combine(mount, ".lazyfs")))
        {
            Console.Error.WriteLine("--mount must name a lazyfs mount (tools/lazyfs; load/powerloss.sh mounts one)");
            return 2;
        }

        var table = new StringBuilder();
        table.AppendLine(settle ? "Stream and consumer made durable (lazyfs sync) before the first cut." : "Strict: nothing reaches the disk but what the server fsyncs, its stream's creation included.");
        table.AppendLine();
        table.AppendLine("| server | power cycles | cuts | acknowledged publishes | acknowledged then lost | wrong data served | duplicates | gaps (not served inside first..last, each once) | acks confirmed | confirmed acks lost (ack floor behind) | restarts failed |");
        table.AppendLine("|---|---|---|---|---|---|---|---|---|---|---|");
        var failed = false;
        foreach (var kind in servers)
        {
            var tally = await RunServerAsync(kind, root, mount, cycles, TimeSpan.FromMinutes(minutes), cuts, seed, settle).ConfigureAwait(false);
            table.AppendLine(CultureInfo.InvariantCulture,
                $"| {Describe(kind, root)} | {tally.Cycles} | {string.Join('/', cuts)} | {tally.Acked:N0} | {tally.Lost:N0} | {tally.Wrong:N0} | {tally.Duplicates:N0} | {tally.Gaps:N0} | {tally.AcksConfirmed:N0} | {tally.AckFloorsLost:N0} | {tally.RestartsFailed} |");
            failed |= tally.RestartsFailed > 0;
        }

        Console.WriteLine();
        Console.Write(table);
        if (outFile is not null)
        {
            File.WriteAllText(outFile, table.ToString());
        }

        return failed ? 1 : 0;
    }

    internal static string Describe(string kind, string root) => kind switch
    {
        "courier" => $"courier (sync_interval: always, the default) `{ServerProcess.Version("courier", root)}`",
        "courier-1s" => "courier (sync_interval: 1s)",
        _ => $"nats-server (default lazy sync) `{ServerProcess.Version("nats-server", root)}`",
    };

    internal static string? Config(string kind) => kind == "courier-1s" ? "jetstream { sync_interval: \"1s\" }\n" : null;

    private sealed class Tally
    {
        public int Cycles;
        public long Acked;
        public long Lost;
        public long Wrong;
        public long Duplicates;
        public long Gaps;
        public long AcksConfirmed;
        public long AckFloorsLost;
        public int RestartsFailed;
    }

    /// <summary>What the client was told: publishes acknowledged (sequence to publish number) and acks confirmed.</summary>
    private sealed class Ledger
    {
        public readonly Dictionary<ulong, long> Acked = [];
        public readonly SortedSet<ulong> Confirmed = [];
        public readonly HashSet<ulong> Gaps = [];
        public long Counter;

        /// <summary>The highest F with every sequence 1..F confirmed acked (the ack floor the server owes).</summary>
        public ulong ConfirmedFloor(ulong firstSeq)
        {
            var floor = firstSeq > 0 ? firstSeq - 1 : 0;
            foreach (var s in Confirmed.GetViewBetween(firstSeq, ulong.MaxValue))
            {
                if (s != floor + 1)
                {
                    break;
                }

                floor = s;
            }

            return floor;
        }
    }

    private static async Task<Tally> RunServerAsync(string kind, string root, string mount, int cycles, TimeSpan bound, string[] cuts, int seed, bool settle)
    {
        var storeDir = Path.Combine(mount, $"{kind}-{DateTime.UtcNow:HHmmss}");
        var workDir = Directory.CreateTempSubdirectory("courier-powerloss-").FullName;
        Directory.CreateDirectory(storeDir);
        var random = new Random(seed);
        var ledger = new Ledger();
        var tally = new Tally();
        var clock = Stopwatch.StartNew();
        Console.WriteLine($"{kind}: store {storeDir}, up to {cycles} cycles or {bound.TotalMinutes:N0} minutes");
        for (var cycle = 0; cycle <= cycles; cycle++)
        {
            using var server = FaultServer.Start(kind, root, storeDir, workDir, Config(kind), out var failure);
            if (server is null)
            {
                tally.RestartsFailed++;
                Console.WriteLine($"{kind} cycle {cycle}: the server did not restart on what the power cut left:\n{failure}");
                break;
            }

            await using var nats = new NatsConnection(new NatsOpts
            {
                Url = server.Url,
                Name = "powerloss",
                RequestTimeout = TimeSpan.FromSeconds(10),
                CommandTimeout = TimeSpan.FromSeconds(10),
                MaxReconnectRetry = 0,
            });
            await nats.ConnectAsync().ConfigureAwait(false);
            var js = new NatsJSContext(nats);
            if (cycle > 0)
            {
                await CheckAsync(kind, cycle, js, ledger, tally).ConfigureAwait(false);
                tally.Cycles = cycle;
            }
            else
            {
                await js.CreateStreamAsync(new StreamConfig(Stream, ["pl.>"]) { Storage = StreamConfigStorage.File }).ConfigureAwait(false);
                await CreateConsumerAsync(js).ConfigureAwait(false);
                if (settle)
                {
                    // The stream and consumer exist durably before the first cut, as on a machine up for
                    // longer than the kernel's writeback interval (lazyfs itself never writes back).
                    await File.WriteAllTextAsync(Path.Combine(mount, ".lazyfs"), "sync").ConfigureAwait(false);
                }
            }

            if (cycle == cycles || clock.Elapsed > bound)
            {
                server.Stop();
                break;
            }

            var duration = TimeSpan.FromMilliseconds(random.Next(200, 1200));
            var (acked, confirmed) = await LoadAsync(js, ledger, duration).ConfigureAwait(false);
            tally.Acked += acked;
            tally.AcksConfirmed += confirmed;
            server.Kill9();
            var cut = cuts[cycle % cuts.Length];
            await File.WriteAllTextAsync(Path.Combine(mount, ".lazyfs"), $"{cut} {random.Next()}").ConfigureAwait(false);
        }

        Console.WriteLine($"{kind}: {tally.Cycles} power cycles, {tally.Acked:N0} acknowledged, {tally.Lost:N0} lost, {tally.AckFloorsLost:N0} ack floors behind, {clock.Elapsed.TotalSeconds:N0} s");
        Directory.Delete(workDir, recursive: true);
        return tally;
    }

    private static Task CreateConsumerAsync(NatsJSContext js) =>
        js.CreateOrUpdateConsumerAsync(Stream, new ConsumerConfig(Durable)
        {
            AckPolicy = ConsumerConfigAckPolicy.Explicit,
            AckWait = TimeSpan.FromSeconds(10), // no redelivery inside one short cycle
        }).AsTask();

    private static string Subject(long n) => $"pl.{n % 8}";

    /// <summary>Unique per publish number, 24 to 280 bytes.</summary>
    private static byte[] Payload(long n)
    {
        var text = $"pl {n.ToString(CultureInfo.InvariantCulture)} ";
        var pad = (int)(n * 7919 % 257);
        var bytes = new byte[text.Length + 16 + pad];
        Encoding.ASCII.GetBytes(text, bytes);
        for (var i = text.Length; i < bytes.Length; i++)
        {
            bytes[i] = (byte)('a' + ((n + i) % 26));
        }

        return bytes;
    }

    private static long? PublishNumber(ReadOnlySpan<byte> payload)
    {
        var text = Encoding.ASCII.GetString(payload[..Math.Min(payload.Length, 24)]);
        var parts = text.Split(' ');
        return parts.Length > 1 && parts[0] == "pl" && long.TryParse(parts[1], CultureInfo.InvariantCulture, out var n) ? n : null;
    }

    /// <summary>A window of publishers and one consumer with double acks, for <paramref name="duration"/>.</summary>
    private static async Task<(long Acked, long Confirmed)> LoadAsync(NatsJSContext js, Ledger ledger, TimeSpan duration)
    {
        using var stop = new CancellationTokenSource(duration);
        long acked = 0, confirmed = 0, started = 0;
        var publishers = Enumerable.Range(0, Window).Select(async _ =>
        {
            while (!stop.IsCancellationRequested && Interlocked.Increment(ref started) <= MaxPerCycle)
            {
                var n = Interlocked.Increment(ref ledger.Counter);
                try
                {
                    var ack = await js.PublishAsync(Subject(n), Payload(n), cancellationToken: stop.Token).ConfigureAwait(false);
                    ack.EnsureSuccess();
                    lock (ledger)
                    {
                        ledger.Acked[ack.Seq] = n;
                    }

                    Interlocked.Increment(ref acked);
                }
                catch (Exception e) when (e is NatsException or OperationCanceledException or TimeoutException)
                {
                    return; // no PubAck: may or may not be stored
                }
            }
        }).ToList();
        var consumer = Task.Run(async () =>
        {
            try
            {
                var c = await js.GetConsumerAsync(Stream, Durable, stop.Token).ConfigureAwait(false);
                while (!stop.IsCancellationRequested)
                {
                    await foreach (var msg in c.FetchAsync<byte[]>(new NatsJSFetchOpts { MaxMsgs = 50, Expires = TimeSpan.FromSeconds(1) }, cancellationToken: stop.Token).ConfigureAwait(false))
                    {
                        await msg.AckAsync(new AckOpts { DoubleAck = true }, stop.Token).ConfigureAwait(false);
                        lock (ledger)
                        {
                            ledger.Confirmed.Add(msg.Metadata!.Value.Sequence.Stream);
                        }

                        confirmed++;
                    }
                }
            }
            catch (Exception e) when (e is NatsException or OperationCanceledException or TimeoutException)
            {
                // The cycle is over.
            }
        });
        await Task.WhenAll(publishers).ConfigureAwait(false);
        await consumer.ConfigureAwait(false); // runs until the duration is over
        return (acked, confirmed);
    }

    /// <summary>After a restart: reads the whole stream back and compares it and the consumer with the ledger.</summary>
    private static async Task CheckAsync(string kind, int cycle, NatsJSContext js, Ledger ledger, Tally tally)
    {
        INatsJSStream stream;
        try
        {
            stream = await js.GetStreamAsync(Stream).ConfigureAwait(false);
        }
        catch (NatsJSApiException e) when (e.Error.Code == 404)
        {
            Console.WriteLine($"{kind} cycle {cycle}: the stream is gone ({ledger.Acked.Count:N0} acknowledged messages lost); recreating it");
            tally.Lost += ledger.Acked.Count;
            ledger.Acked.Clear();
            ledger.Confirmed.Clear();
            await js.CreateStreamAsync(new StreamConfig(Stream, ["pl.>"]) { Storage = StreamConfigStorage.File }).ConfigureAwait(false);
            await CreateConsumerAsync(js).ConfigureAwait(false);
            return;
        }

        var state = stream.Info.State;
        var served = new Dictionary<ulong, (string Subject, byte[] Data)>();
        if (state.Messages > 0)
        {
            var reader = await js.CreateOrderedConsumerAsync(Stream).ConfigureAwait(false);
            var empty = 0;
            while (served.Count < (int)state.Messages && empty < 3)
            {
                var got = 0;
                await foreach (var msg in reader.FetchAsync<byte[]>(new NatsJSFetchOpts { MaxMsgs = 1000, Expires = TimeSpan.FromSeconds(2) }).ConfigureAwait(false))
                {
                    served[msg.Metadata!.Value.Sequence.Stream] = (msg.Subject, msg.Data ?? []);
                    got++;
                }

                empty = got == 0 ? empty + 1 : 0;
            }
        }

        long lost = 0, wrong = 0;
        foreach (var (seq, n) in ledger.Acked.ToList())
        {
            if (!served.TryGetValue(seq, out var m))
            {
                lost++;
                ledger.Acked.Remove(seq);
            }
            else if (m.Subject != Subject(n) || !m.Data.AsSpan().SequenceEqual(Payload(n)))
            {
                wrong++;
                ledger.Acked.Remove(seq);
            }
        }

        var duplicates = served.Values.Select(m => PublishNumber(m.Data)).Where(n => n is not null).GroupBy(n => n).Count(g => g.Count() > 1);
        // Holes inside the stream (no deletes in this workload), each counted once, the cycle it appears.
        long gaps = 0;
        for (var seq = state.FirstSeq; state.Messages > 0 && seq <= state.LastSeq; seq++)
        {
            if (!served.ContainsKey(seq) && ledger.Gaps.Add(seq))
            {
                gaps++;
            }
        }

        tally.Lost += lost;
        tally.Wrong += wrong;
        tally.Duplicates += duplicates;
        tally.Gaps += gaps;

        // The consumer owes every ack whose double ack was confirmed: its floor may not be behind them.
        var owed = ledger.ConfirmedFloor(Math.Max(1, state.FirstSeq));
        ulong floor;
        try
        {
            var consumer = await js.GetConsumerAsync(Stream, Durable).ConfigureAwait(false);
            floor = consumer.Info.AckFloor.StreamSeq;
        }
        catch (NatsJSApiException e) when (e.Error.Code == 404)
        {
            Console.WriteLine($"{kind} cycle {cycle}: the durable consumer is gone; recreating it");
            floor = 0;
            await CreateConsumerAsync(js).ConfigureAwait(false);
        }

        if (floor < owed && owed > 0)
        {
            tally.AckFloorsLost++;
        }

        if (lost + wrong + duplicates + gaps > 0 || floor < owed)
        {
            Console.WriteLine($"{kind} cycle {cycle}: {lost} acknowledged lost, {wrong} wrong, {duplicates} duplicated, {gaps} gaps; ack floor {floor} (confirmed {owed}); stream {state.FirstSeq}..{state.LastSeq}, {state.Messages} messages");
        }

        // From here on the ledger is what survived: a loss is counted once, and sequences past the
        // stream's end (a lost tail) will be taken by new messages.
        ledger.Confirmed.RemoveWhere(s => s > state.LastSeq);
        if (floor < owed)
        {
            ledger.Confirmed.RemoveWhere(s => s > floor);
        }
    }
}
