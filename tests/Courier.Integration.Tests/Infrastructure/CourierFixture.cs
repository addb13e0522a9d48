namespace Courier.Integration.Tests.Infrastructure;

/// <summary>The system under test: <c>dotnet courier.dll</c> from src/Gateway, on a random loopback port.</summary>
public sealed class CourierFixture : ServerFixture
{
    public CourierFixture()
        : base(ServerKind.Courier)
    {
    }
}
