namespace Courier.Gateway.Tests.Configuration;

/// <summary>Sets an environment variable with a unique name for the life of the object.</summary>
internal sealed class EnvironmentVariable : IDisposable
{
    public EnvironmentVariable(string value)
    {
        Name = "COURIER_TEST_" + Guid.NewGuid().ToString("N").ToUpperInvariant();
        Environment.SetEnvironmentVariable(Name, value);
    }

    public string Name { get; }

    public void Dispose() => Environment.SetEnvironmentVariable(Name, null);
}
