using System.Net;
using System.Net.Sockets;

namespace Courier.Testing;

/// <summary>
/// Loopback ports for a server that must be told its port before it starts (a cluster's route ports,
/// a peer broker's port). A port taken with bind(0) and released comes from the kernel's ephemeral range,
/// the range every other bind(0) and every outgoing connection draws from, so before the server binds it
/// a route dial or an Akka.Remote listener can take it ("Address already in use"). These ports come
/// from below that range, walked in order from a point picked per process, each checked free and never
/// handed out twice by one process.
/// </summary>
public static class LoopbackPorts
{
    private const int Lowest = 10_000;

    private static readonly (int From, int To) Range = PickRange();
    private static int _next = Range.From + Random.Shared.Next(Math.Max(1, Range.To - Range.From));

    /// <summary>A loopback port nobody listens on now, outside the ephemeral range when there is room beside it.</summary>
    public static int Next()
    {
        var span = Range.To - Range.From;
        if (span <= 0)
        {
            return Ephemeral();
        }

        for (var attempt = 0; attempt < span; attempt++)
        {
            var port = Range.From + ((Interlocked.Increment(ref _next) - Range.From) % span);
            if (IsFree(port))
            {
                return port;
            }
        }

        throw new InvalidOperationException($"no free loopback port in {Range.From}-{Range.To - 1}");
    }

    private static int Ephemeral()
    {
        using var probe = new TcpListener(IPAddress.Loopback, 0);
        probe.Start();
        return ((IPEndPoint)probe.LocalEndpoint).Port;
    }

    private static bool IsFree(int port)
    {
        try
        {
            using var probe = new TcpListener(IPAddress.Loopback, port);
            probe.Start();
            return true;
        }
        catch (SocketException)
        {
            return false;
        }
    }

    /// <summary>Below the ephemeral range (Linux: /proc/sys/net/ipv4/ip_local_port_range), else above it, else none.</summary>
    private static (int From, int To) PickRange()
    {
        var (low, high) = (32_768, 60_999); // Linux's default
        try
        {
            var fields = File.ReadAllText("/proc/sys/net/ipv4/ip_local_port_range").Split((char[]?)null, StringSplitOptions.RemoveEmptyEntries);
            (low, high) = (int.Parse(fields[0], System.Globalization.CultureInfo.InvariantCulture), int.Parse(fields[1], System.Globalization.CultureInfo.InvariantCulture));
        }
        catch (Exception e) when (e is IOException or UnauthorizedAccessException or FormatException or IndexOutOfRangeException)
        {
            // Not Linux: keep the default.
        }

        return low - Lowest >= 1_000 ? (Lowest, low) : 65_535 - high >= 1_000 ? (high + 1, 65_536) : (0, 0);
    }
}
