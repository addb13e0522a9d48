using System.Net;
using System.Text.Json;
using Courier.Integration.Tests.Infrastructure;

namespace Courier.Cluster.Tests.Infrastructure;

/// <summary>What the fault tests read of a node's HTTP monitoring: /healthz and /routez.</summary>
public static class NodeMonitor
{
    /// <summary>Polls /healthz until it answers <paramref name="expected"/> or <paramref name="timeout"/> passes; returns whether it did.</summary>
    public static async Task<bool> HealthAsync(HttpClient http, ServerProcess node, HttpStatusCode expected, TimeSpan timeout) =>
        await Poll.UntilAsync(
            async () =>
            {
                try
                {
                    return (await http.GetAsync(new Uri(node.MonitorUri, "healthz"))).StatusCode == expected;
                }
                catch (HttpRequestException)
                {
                    return false;
                }
            },
            timeout);

    /// <summary>The names of the node's routes (/routez remote_name), sorted; none when monitoring does not answer.</summary>
    public static async Task<IReadOnlyList<string?>> RouteNamesAsync(HttpClient http, ServerProcess node)
    {
        try
        {
            using var routez = JsonDocument.Parse(await http.GetStringAsync(new Uri(node.MonitorUri, "routez")));
            return [.. routez.RootElement.GetProperty("routes").EnumerateArray().Select(r => r.GetProperty("remote_name").GetString()).Order()];
        }
        catch (HttpRequestException)
        {
            return [];
        }
    }
}
