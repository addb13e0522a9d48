using Courier.Cluster.Tests.Infrastructure;
using Courier.Integration.Tests.Infrastructure;

namespace Courier.Cluster.Tests;

/// <summary>Three courier nodes in one mesh, shared by a test class (each test uses its own subjects).</summary>
public sealed class CourierMeshFixture : IAsyncLifetime
{
    public Mesh Mesh { get; private set; } = null!;

    public async Task InitializeAsync() => Mesh = await Mesh.StartAsync(ServerKind.Courier, ServerKind.Courier, ServerKind.Courier);

    public async Task DisposeAsync() => await Mesh.DisposeAsync();
}

/// <summary>Debian's nats-server 2.9.10 (node 0) and two courier nodes, each naming all three in its routes.</summary>
public sealed class MixedMeshFixture : IAsyncLifetime
{
    public Mesh Mesh { get; private set; } = null!;

    public async Task InitializeAsync() => Mesh = await Mesh.StartAsync(ServerKind.NatsServer, ServerKind.Courier, ServerKind.Courier);

    public async Task DisposeAsync() => await Mesh.DisposeAsync();
}
