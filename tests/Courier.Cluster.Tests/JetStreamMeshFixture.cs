using System.Net;
using Courier.Cluster.Tests.Infrastructure;
using Courier.Integration.Tests.Infrastructure;

namespace Courier.Cluster.Tests;

/// <summary>
/// Three courier nodes in one mesh with JetStream, each on a store directory of its own that outlives
/// a restart of the node (removed with the fixture).
/// </summary>
public sealed class JetStreamMeshFixture : IAsyncLifetime
{
    private readonly string _stores = Directory.CreateTempSubdirectory("courier-jsc-").FullName;

    public Mesh Mesh { get; private set; } = null!;

    public async Task InitializeAsync()
    {
        Mesh = await Mesh.StartAsync(
            [ServerKind.Courier, ServerKind.Courier, ServerKind.Courier],
            routeCredentials: null,
            extraArgs: ["-js"],
            nodeArgs: i => ["-sd", Path.Combine(_stores, $"node-{i}")]);

        // Streams are placed by the cluster's leader: every node a member first (/healthz says so).
        using var http = new HttpClient { Timeout = TimeSpan.FromSeconds(10) };
        foreach (var node in Mesh.Nodes)
        {
            if (!await NodeMonitor.HealthAsync(http, node, HttpStatusCode.OK, TimeSpan.FromSeconds(45)))
            {
                throw new TimeoutException($"{node.Url} never became a cluster member\n{Mesh.Diagnostics()}");
            }
        }
    }

    public async Task DisposeAsync()
    {
        await Mesh.DisposeAsync();
        try
        {
            Directory.Delete(_stores, recursive: true);
        }
        catch (IOException)
        {
            // A leftover temp folder is harmless.
        }
    }
}
