using System.Diagnostics;
using System.Globalization;
using System.Text;
using NATS.Client.Core;
using NATS.Client.JetStream;
using NATS.Client.JetStream.Models;

namespace Courier.Load.Faults;

/// <summary>
/// Corruption side by side (load/corruption.sh): each server stores a stream of known messages and
/// is stopped; each trial copies that store, puts one fault (a flipped bit, a truncation, a zeroed
/// 4 KiB page, 512 garbage bytes) into one of the stream's message block files, restarts the server
/// on it and reads every sequence back with a client. Counted per server: faults, detected (the
/// server logged a warning or error a clean restart does not log, reported lost messages in the
/// stream state, or refused to start), corrupt messages served, and messages lost although their
/// bytes were still intact in the damaged file.
/// </summary>
internal static class CorruptionRun
{
    private const string Stream = "CR";
    private static readonly string[] Faults = ["bitflip", "truncate", "zeropage", "garbage"];

    public static async Task<int> MainAsync(ReadOnlyMemory<string> argv, string root)
    {
        var args = argv.ToArray();
        var servers = new[] { "courier", "nats-server" };
        var trials = 52;
        var messages = 200;
        var seed = 1;
        var minutes = 20.0;
        string? outFile = null;
        var verbose = false;
        for (var i = 0; i < args.Length; i++)
        {
            var value = i + 1 < args.Length ? args[i + 1] : "";
            switch (args[i])
            {
                case "--servers": servers = value.Split(',', StringSplitOptions.RemoveEmptyEntries); break;
                case "--trials": trials = int.Parse(value, CultureInfo.InvariantCulture); break;
                case "--messages": messages = int.Parse(value, CultureInfo.InvariantCulture); break;
                case "--seed": seed = int.Parse(value, CultureInfo.InvariantCulture); break;
                case "--minutes": minutes = double.Parse(value, CultureInfo.InvariantCulture); break;
                case "--out": outFile = value; break;
                case "--verbose": verbose = true; i--; break;
                default:
                    Console.Error.WriteLine($"unknown argument {args[i]}; use --servers courier,nats-server --trials N --messages N --seed N --minutes M --out FILE [--verbose]");
                    return 2;
            }

            i++;
        }

        var table = new StringBuilder();
        table.AppendLine("| server | trials (bit flip / truncate / zeroed page / garbage) | detected | undetected, nothing lost | undetected with loss or corrupt data | corrupt messages served | intact messages lost | damaged messages lost | restarts failed |");
        table.AppendLine("|---|---|---|---|---|---|---|---|---|");
        foreach (var kind in servers)
        {
            var t = await RunServerAsync(kind, root, trials, messages, seed, TimeSpan.FromMinutes(minutes), verbose).ConfigureAwait(false);
            table.AppendLine(CultureInfo.InvariantCulture,
                $"| {PowerLossRun.Describe(kind, root)} | {t.Trials} ({string.Join(" / ", Faults.Select(f => t.ByFault.GetValueOrDefault(f)))}) | {t.Detected} | {t.UndetectedHarmless} | {t.UndetectedHarmful} | {t.CorruptServed:N0} | {t.IntactLost:N0} | {t.DamagedLost:N0} | {t.RestartsFailed} |");
        }

        Console.WriteLine();
        Console.Write(table);
        if (outFile is not null)
        {
            File.WriteAllText(outFile, table.ToString());
        }

        return 0;
    }

    private sealed class Tally
    {
        public int Trials;
        public readonly Dictionary<string, int> ByFault = [];
        public int Detected;
        public int UndetectedHarmless;
        public int UndetectedHarmful;
        public long CorruptServed;
        public long IntactLost;
        public long DamagedLost;
        public int RestartsFailed;
    }

    private static string Subject(int seq) => $"cr.{seq % 5}";

    /// <summary>Unique per sequence, 40 to 640 bytes, so its bytes can be looked for in a damaged file.</summary>
    private static byte[] Payload(int seq)
    {
        var text = $"corruption message {seq.ToString("D6", CultureInfo.InvariantCulture)} ";
        var bytes = new byte[text.Length + 20 + (seq * 7919 % 600)];
        Encoding.ASCII.GetBytes(text, bytes);
        for (var i = text.Length; i < bytes.Length; i++)
        {
            bytes[i] = (byte)('A' + ((seq * 31 + i) % 26));
        }

        return bytes;
    }

    private static async Task<Tally> RunServerAsync(string kind, string root, int trials, int messages, int seed, TimeSpan bound, bool verbose)
    {
        var tally = new Tally();
        var clock = Stopwatch.StartNew();
        var workDir = Directory.CreateTempSubdirectory("courier-corruption-").FullName;
        var template = Path.Combine(workDir, "template");
        Directory.CreateDirectory(template);

        // The stream every trial starts from, written by the server itself and stopped cleanly.
        using (var server = FaultServer.Start(kind, root, template, workDir, PowerLossRun.Config(kind), out var failure)
            ?? throw new InvalidOperationException($"{kind} did not start:\n{failure}"))
        {
            await using var nats = new NatsConnection(new NatsOpts { Url = server.Url, Name = "corruption" });
            var js = new NatsJSContext(nats);
            await js.CreateStreamAsync(new StreamConfig(Stream, ["cr.>"]) { Storage = StreamConfigStorage.File }).ConfigureAwait(false);
            for (var seq = 1; seq <= messages; seq++)
            {
                var ack = await js.PublishAsync(Subject(seq), Payload(seq)).ConfigureAwait(false);
                ack.EnsureSuccess();
                if (ack.Seq != (ulong)seq)
                {
                    throw new InvalidOperationException($"{kind} stored message {seq} at {ack.Seq}");
                }
            }

            server.Stop();
        }

        // What a clean restart logs, so that only what a fault adds counts as detection.
        var baseline = new HashSet<string>(StringComparer.Ordinal);
        var cleanDir = Copy(template, Path.Combine(workDir, "clean"));
        using (var clean = FaultServer.Start(kind, root, cleanDir, workDir, PowerLossRun.Config(kind), out var failure)
            ?? throw new InvalidOperationException($"{kind} did not restart on a clean store:\n{failure}"))
        {
            var (_, corrupt, missing) = await ReadBackAsync(clean.Url, messages).ConfigureAwait(false);
            if (corrupt + missing.Count > 0)
            {
                throw new InvalidOperationException($"{kind}: a clean restart served {corrupt} corrupt and lost {missing.Count} messages");
            }

            clean.Stop();
            baseline.UnionWith(Warnings(clean.Log()));
        }

        Directory.Delete(cleanDir, recursive: true);
        var random = new Random(seed);
        for (var trial = 0; trial < trials && clock.Elapsed < bound; trial++)
        {
            var fault = Faults[trial % Faults.Length];
            var dir = Copy(template, Path.Combine(workDir, $"trial{trial}"));
            var blocks = Directory.GetFiles(dir, "*.blk", SearchOption.AllDirectories)
                .Where(f => f.Contains($"/streams/{Stream}/", StringComparison.Ordinal) && new FileInfo(f).Length > 0).ToArray();
            if (blocks.Length == 0)
            {
                throw new InvalidOperationException($"{kind}: no block files of stream {Stream} under {dir}");
            }

            var target = blocks[random.Next(blocks.Length)];
            var original = File.ReadAllBytes(target);
            var (where, from, to) = Inject(target, fault, random);
            tally.Trials++;
            tally.ByFault[fault] = tally.ByFault.GetValueOrDefault(fault) + 1;

            using var server = FaultServer.Start(kind, root, dir, workDir, PowerLossRun.Config(kind), out var failure);
            var detected = false;
            long corrupt = 0;
            List<int> missing;
            if (server is null)
            {
                tally.RestartsFailed++;
                failure = failure.Split('\n').LastOrDefault() ?? "";
                detected = true;
                missing = [.. Enumerable.Range(1, messages)];
                Console.WriteLine($"{kind} trial {trial} ({fault} {where}): did not start: {failure}");
            }
            else
            {
                bool reported;
                (reported, corrupt, missing) = await ReadBackAsync(server.Url, messages).ConfigureAwait(false);
                server.Stop();
                var added = Warnings(server.Log()).Where(w => !baseline.Contains(w)).ToList();
                detected = reported || added.Count > 0;
                if (verbose || corrupt > 0 || (!detected && missing.Count > 0))
                {
                    Console.WriteLine($"{kind} trial {trial} ({fault} {where}): detected {detected} ({(reported ? "stream state reports lost data" : added.FirstOrDefault() ?? "nothing")}), {corrupt} corrupt served, {missing.Count} missing");
                }
            }

            // A lost message was intact when no byte of its record was damaged: its payload is not in the
            // damaged file, or the damage is clear of it and of the record's header (at most 32 bytes
            // plus the subject) and checksum (4 bytes in Courier, 8 in nats-server).
            var intact = missing.Count(seq =>
            {
                var p = original.AsSpan().IndexOf(Payload(seq));
                return p < 0 || p + Payload(seq).Length + 8 <= from || p - 40 >= to;
            });
            tally.IntactLost += intact;
            tally.DamagedLost += missing.Count - intact;
            tally.CorruptServed += corrupt;
            if (detected)
            {
                tally.Detected++;
            }
            else if (corrupt + missing.Count == 0)
            {
                tally.UndetectedHarmless++;
            }
            else
            {
                tally.UndetectedHarmful++;
            }

            Directory.Delete(dir, recursive: true);
        }

        Console.WriteLine($"{kind}: {tally.Trials} trials, {tally.Detected} detected, {tally.CorruptServed} corrupt served, {tally.IntactLost} intact lost, {clock.Elapsed.TotalSeconds:N0} s");
        Directory.Delete(workDir, recursive: true);
        return tally;
    }

    /// <summary>Puts one fault into <paramref name="path"/>; says where, and which bytes it damaged.</summary>
    private static (string Where, int From, int To) Inject(string path, string fault, Random random)
    {
        var bytes = File.ReadAllBytes(path);
        var at = random.Next(bytes.Length);
        switch (fault)
        {
            case "bitflip":
                bytes[at] ^= (byte)(1 << random.Next(8));
                File.WriteAllBytes(path, bytes);
                return ($"bit at byte {at} of {Path.GetFileName(path)} ({bytes.Length} bytes)", at, at + 1);
            case "truncate":
                File.WriteAllBytes(path, bytes[..at]);
                return ($"{Path.GetFileName(path)} cut to {at} of {bytes.Length} bytes", at, bytes.Length);
            case "zeropage":
                var page = at / 4096 * 4096;
                Array.Clear(bytes, page, Math.Min(4096, bytes.Length - page));
                File.WriteAllBytes(path, bytes);
                return ($"page at {page} of {Path.GetFileName(path)} zeroed", page, page + 4096);
            default:
                var start = Math.Min(at, Math.Max(0, bytes.Length - 512));
                random.NextBytes(bytes.AsSpan(start, Math.Min(512, bytes.Length - start)));
                File.WriteAllBytes(path, bytes);
                return ($"512 random bytes at {start} of {Path.GetFileName(path)}", start, start + 512);
        }
    }

    /// <summary>Warning and error lines without their pid and time, to compare with a clean restart's.</summary>
    private static IEnumerable<string> Warnings(string[] log) =>
        log.Select(l => (Index: Math.Max(l.IndexOf("[WRN] ", StringComparison.Ordinal), l.IndexOf("[ERR] ", StringComparison.Ordinal)), Line: l))
            .Where(x => x.Index >= 0)
            .Select(x => x.Line[x.Index..]);

    /// <summary>Every sequence through the stream message get API: served corrupt, missing, and whether the stream state reported lost data.</summary>
    private static async Task<(bool Reported, long Corrupt, List<int> Missing)> ReadBackAsync(string url, int messages)
    {
        await using var nats = new NatsConnection(new NatsOpts { Url = url, Name = "corruption", RequestTimeout = TimeSpan.FromSeconds(10) });
        var js = new NatsJSContext(nats);
        INatsJSStream stream;
        try
        {
            stream = await js.GetStreamAsync(Stream).ConfigureAwait(false);
        }
        catch (NatsJSApiException e) when (e.Error.Code == 404)
        {
            return (true, 0, [.. Enumerable.Range(1, messages)]); // the stream is gone: reported by its absence
        }

        long corrupt = 0;
        var missing = new List<int>();
        for (var seq = 1; seq <= messages; seq++)
        {
            try
            {
                var got = await stream.GetAsync(new StreamMsgGetRequest { Seq = (ulong)seq }).ConfigureAwait(false);
                if (got.Message.Subject != Subject(seq) || !got.Message.Data.Span.SequenceEqual(Payload(seq)))
                {
                    corrupt++;
                }
            }
            catch (NatsJSApiException e) when (e.Error.Code is 404 or 500)
            {
                missing.Add(seq);
            }
        }

        await stream.RefreshAsync().ConfigureAwait(false);
        var reported = stream.Info.State.Lost is { } lost && (lost.Msgs?.Count > 0 || lost.Bytes > 0);
        return (reported, corrupt, missing);
    }

    private static string Copy(string from, string to)
    {
        foreach (var dir in Directory.GetDirectories(from, "*", SearchOption.AllDirectories))
        {
            Directory.CreateDirectory(dir.Replace(from, to, StringComparison.Ordinal));
        }

        Directory.CreateDirectory(to);
        foreach (var file in Directory.GetFiles(from, "*", SearchOption.AllDirectories))
        {
            File.Copy(file, file.Replace(from, to, StringComparison.Ordinal));
        }

        return to;
    }
}
