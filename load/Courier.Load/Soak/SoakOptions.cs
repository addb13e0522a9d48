using System.Globalization;

namespace Courier.Load.Soak;

/// <summary>The soak verb's settings: <c>soak --connections 10000 --minutes 10 --kill-every 3</c>.</summary>
internal sealed record SoakOptions
{
    /// <summary>Subscriber connections held for the whole run (each with one SUB).</summary>
    public int Connections { get; init; } = 10_000;

    /// <summary>How long the load runs.</summary>
    public double Minutes { get; init; } = 10;

    /// <summary>Minutes between kill -9s of the server (0: never).</summary>
    public double KillEvery { get; init; } = 3;

    /// <summary>Core messages per second, spread over the subscribers' subjects.</summary>
    public int CoreRate { get; init; } = 2_000;

    /// <summary>JetStream publishes per second over all streams (each waits for its PubAck).</summary>
    public int JetStreamRate { get; init; } = 300;

    /// <summary>File streams, each with one durable pull consumer.</summary>
    public int Streams { get; init; } = 3;

    /// <summary>Seconds between samples of the server's RSS, fds, threads and connections.</summary>
    public double SampleSeconds { get; init; } = 5;

    /// <summary>Seconds after the first full set of connections before memory counts as warmed up.</summary>
    public double WarmupSeconds { get; init; } = 60;

    /// <summary>Source addresses 127.0.0.1 .. 127.0.0.N the subscribers connect from (ephemeral ports per address).</summary>
    public int SourceAddresses { get; init; } = 4;

    /// <summary>Where the CSV, PNG and summary go; default load/results.</summary>
    public string? OutDir { get; init; }

    /// <summary>Parses <c>--name value</c> pairs; null and a message on a bad argument.</summary>
    public static SoakOptions? Parse(ReadOnlySpan<string> args, out string? error)
    {
        var o = new SoakOptions();
        error = null;
        for (var i = 0; i < args.Length; i++)
        {
            if (i + 1 >= args.Length)
            {
                error = $"{args[i]} needs a value";
                return null;
            }

            var v = args[++i];
            switch (args[i - 1])
            {
                case "--connections": o = o with { Connections = Math.Max(1, Int(v)) }; break;
                case "--minutes": o = o with { Minutes = Math.Clamp(Num(v), 0.1, 24 * 60) }; break; // bounded: at most a day
                case "--kill-every": o = o with { KillEvery = Math.Max(0, Num(v)) }; break;
                case "--core-rate": o = o with { CoreRate = Math.Max(0, Int(v)) }; break;
                case "--js-rate": o = o with { JetStreamRate = Math.Max(0, Int(v)) }; break;
                case "--streams": o = o with { Streams = Math.Clamp(Int(v), 1, 32) }; break;
                case "--sample-seconds": o = o with { SampleSeconds = Math.Clamp(Num(v), 0.5, 600) }; break;
                case "--warmup-seconds": o = o with { WarmupSeconds = Math.Max(0, Num(v)) }; break;
                case "--sources": o = o with { SourceAddresses = Math.Clamp(Int(v), 1, 250) }; break;
                case "--out": o = o with { OutDir = v }; break;
                default:
                    error = $"unknown soak argument {args[i - 1]}; use --connections N --minutes M --kill-every K --core-rate R --js-rate R --streams S --sample-seconds S --warmup-seconds S --sources N --out DIR";
                    return null;
            }
        }

        return o;

        static int Int(string v) => int.Parse(v, CultureInfo.InvariantCulture);
        static double Num(string v) => double.Parse(v, CultureInfo.InvariantCulture);
    }
}
