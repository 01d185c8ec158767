/* Exits 0.  Linked statically (tests/CMakeLists.txt): `gvs run` must
 * refuse it, where running it would succeed without a GPU
 * (unit.cli_run_static). */
int main(void)
{
    return 0;
}
