using System.Globalization;
using NATS.Client.Core;
using NATS.Client.JetStream;

namespace Courier.Load.Nemesis;

/// <summary>
/// The nemesis: from a seed, a schedule of one kind of fault, each held a few seconds and healed, with
/// healthy time between, until the run's end. Every fault is recorded with the nodes it hit.
/// </summary>
internal sealed class NemesisFaults
{
    /// <summary>The kinds, as <c>--faults</c> names them.</summary>
    public static readonly string[] Kinds =
    [
        "partition-one", "partition-leader", "partition-half", "bridge", "kill", "kill-leader", "pause", "pause-leader",
        "power-one", "power-all", "corrupt-bit", "corrupt-truncate", "member",
    ];

    private readonly string _kind;
    private readonly Random _random;
    private readonly NemesisNet _net;
    private readonly IReadOnlyList<NemesisNode> _nodes;
    private readonly NemesisHistory _history;
    private readonly NatsConnection _control;

    public NemesisFaults(string kind, int seed, NemesisNet net, IReadOnlyList<NemesisNode> nodes, NemesisHistory history, NatsConnection control)
    {
        _kind = kind;
        _random = new Random(seed);
        _net = net;
        _nodes = nodes;
        _history = history;
        _control = control;
    }

    public static bool NeedsLazyfs(string kind) => kind.StartsWith("power", StringComparison.Ordinal);

    /// <summary>Faults until <paramref name="stop"/>, each healed before the next; everything healed on return.</summary>
    public async Task RunAsync(CancellationToken stop)
    {
        try
        {
            while (!stop.IsCancellationRequested)
            {
                await Sleep(2_000 + _random.Next(2_000), stop).ConfigureAwait(false); // healthy
                if (stop.IsCancellationRequested)
                {
                    break;
                }

                var start = _history.Now;
                var hit = await InjectAsync().ConfigureAwait(false);
                await Sleep(3_000 + _random.Next(3_000), CancellationToken.None).ConfigureAwait(false); // held (a fault started is held whole)
                Heal();
                _history.AddFault(new NemesisFaultSpan(_kind, hit, start, _history.Now));
            }
        }
        finally
        {
            Heal();
        }
    }

    private static async Task Sleep(int milliseconds, CancellationToken stop)
    {
        try
        {
            await Task.Delay(milliseconds, stop).ConfigureAwait(false);
        }
        catch (OperationCanceledException)
        {
            // The run is over.
        }
    }

    private async Task<string> InjectAsync()
    {
        var n = _nodes.Count;
        switch (_kind)
        {
            case "partition-one":
            {
                var one = _random.Next(n);
                _net.Cut([one], Others(one));
                return _nodes[one].Name;
            }

            case "partition-leader":
            {
                var one = await LeaderOrAnyAsync().ConfigureAwait(false);
                _net.Cut([one], Others(one));
                return _nodes[one].Name;
            }

            case "partition-half":
            {
                var order = Enumerable.Range(0, n).OrderBy(_ => _random.Next()).ToArray();
                var minority = order[..((n - 1) / 2)];
                _net.Cut(minority, order[((n - 1) / 2)..]);
                return string.Join('+', minority.Select(i => _nodes[i].Name));
            }

            case "bridge":
            {
                // Two halves that cannot see each other, both seeing the middle node.
                var order = Enumerable.Range(0, n).OrderBy(_ => _random.Next()).ToArray();
                var middle = order[0];
                var half = (n - 1) / 2;
                _net.Cut(order[1..(1 + half)], order[(1 + half)..]);
                return $"bridge {_nodes[middle].Name}";
            }

            case "kill":
            case "kill-leader":
            {
                var one = _kind == "kill" ? _random.Next(n) : await LeaderOrAnyAsync().ConfigureAwait(false);
                _nodes[one].Kill();
                return _nodes[one].Name;
            }

            case "pause":
            case "pause-leader":
            {
                var one = _kind == "pause" ? _random.Next(n) : await LeaderOrAnyAsync().ConfigureAwait(false);
                _nodes[one].Pause();
                return _nodes[one].Name;
            }

            case "power-one":
            {
                var one = _random.Next(n);
                _nodes[one].CutPower(_random.Next());
                return _nodes[one].Name;
            }

            case "power-all":
            {
                foreach (var node in _nodes)
                {
                    node.Kill(); // every process down before any disk loses its cache: the same instant for all
                }

                foreach (var node in _nodes)
                {
                    node.CutPower(_random.Next());
                }

                return "all";
            }

            case "corrupt-bit":
            case "corrupt-truncate":
            {
                var one = _random.Next(n);
                _nodes[one].Kill();
                return $"{_nodes[one].Name} {Corrupt(_nodes[one])}";
            }

            case "member":
            {
                // Membership change during a partition: one replica of the stream cut off from every other node and
                // removed from the group (STREAM.PEER.REMOVE); the group takes another server in its place.
                var replica = await ReplicaAsync().ConfigureAwait(false);
                if (replica < 0)
                {
                    return "(no replica known)";
                }

                _net.Cut([replica], Others(replica));
                await Task.Delay(1_000).ConfigureAwait(false);
                var answer = await RequestAsync($"$JS.API.STREAM.PEER.REMOVE.{NemesisWorkload.Stream}", $"{{\"peer\":\"{_nodes[replica].Name}\"}}").ConfigureAwait(false);
                return $"{_nodes[replica].Name} removed: {answer?.Replace(',', ';') ?? "no answer"}";
            }

            default:
                throw new ArgumentException($"unknown fault {_kind}; one of {string.Join(", ", Kinds)}");
        }
    }

    /// <summary>A random replica of the stream (leader or follower), or -1.</summary>
    private async Task<int> ReplicaAsync()
    {
        try
        {
            var info = (await new NatsJSContext(_control).GetStreamAsync(NemesisWorkload.Stream).ConfigureAwait(false)).Info.Cluster;
            var names = new List<string>();
            if (info?.Leader is { } leader)
            {
                names.Add(leader);
            }

            names.AddRange(info?.Replicas?.Select(r => r.Name) ?? []);
            var indexes = names.Select(n => _nodes.FirstOrDefault(x => x.Name == n)?.Index ?? -1).Where(i => i >= 0).ToList();
            return indexes.Count == 0 ? -1 : indexes[_random.Next(indexes.Count)];
        }
        catch (Exception e) when (e is NatsException or NatsJSApiException or TimeoutException)
        {
            return -1;
        }
    }

    private async Task<string?> RequestAsync(string subject, string body)
    {
        try
        {
            var reply = await _control.RequestAsync<byte[], byte[]>(subject, System.Text.Encoding.ASCII.GetBytes(body)).ConfigureAwait(false);
            return reply.Data is { } data ? System.Text.Encoding.UTF8.GetString(data) : null;
        }
        catch (Exception e) when (e is NatsException or TimeoutException)
        {
            return null;
        }
    }

    private IEnumerable<int> Others(int one) => Enumerable.Range(0, _nodes.Count).Where(i => i != one);

    /// <summary>One file of the node's store (a stream's or the Raft logs', anything JetStream keeps) damaged: one bit flipped, or cut short.</summary>
    private string Corrupt(NemesisNode node)
    {
        var files = Directory.EnumerateFiles(node.Store, "*", SearchOption.AllDirectories)
            .Where(f => new FileInfo(f).Length > 0)
            .Order(StringComparer.Ordinal)
            .ToArray();
        if (files.Length == 0)
        {
            return "(no files)";
        }

        var file = files[_random.Next(files.Length)];
        var length = new FileInfo(file).Length;
        var name = Path.GetRelativePath(node.Store, file);
        if (_kind == "corrupt-bit")
        {
            var offset = (long)(_random.NextDouble() * length);
            var bit = _random.Next(8);
            using var stream = new FileStream(file, FileMode.Open, FileAccess.ReadWrite);
            stream.Position = offset;
            var b = stream.ReadByte();
            stream.Position = offset;
            stream.WriteByte((byte)(b ^ (1 << bit)));
            stream.Flush(flushToDisk: true);
            return string.Create(CultureInfo.InvariantCulture, $"{name}@{offset}.{bit}");
        }

        var keep = (long)(_random.NextDouble() * length);
        using (var stream = new FileStream(file, FileMode.Open, FileAccess.ReadWrite))
        {
            stream.SetLength(keep);
            stream.Flush(flushToDisk: true);
        }

        return string.Create(CultureInfo.InvariantCulture, $"{name} cut to {keep}/{length}");
    }

    /// <summary>Everything back: links, paused processes resumed, stopped nodes started.</summary>
    private void Heal()
    {
        _net.Heal();
        foreach (var node in _nodes)
        {
            node.Resume();
            if (!node.Running)
            {
                node.Start();
            }
        }
    }

    private async Task<int> LeaderOrAnyAsync()
    {
        var leader = await LeaderAsync(_control, NemesisWorkload.Stream).ConfigureAwait(false);
        return leader >= 0 ? leader : _random.Next(_nodes.Count);
    }

    /// <summary>The index of the node that leads <paramref name="stream"/> (its server name n1, n2, ...), or -1.</summary>
    public static async Task<int> LeaderAsync(NatsConnection control, string stream)
    {
        try
        {
            var info = await new NatsJSContext(control).GetStreamAsync(stream).ConfigureAwait(false);
            var name = info.Info.Cluster?.Leader;
            return name is { Length: > 1 } && name[0] == 'n' && int.TryParse(name.AsSpan(1), NumberStyles.None, CultureInfo.InvariantCulture, out var i) ? i - 1 : -1;
        }
        catch (Exception e) when (e is NatsException or NatsJSApiException or TimeoutException)
        {
            return -1;
        }
    }
}
